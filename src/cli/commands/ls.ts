import { Command, Option } from 'commander';
import type { LockState, ZooKeeperClient } from '../../index.js';
import { ZooKeeperError, inspectLock, joinPath, parseContender } from '../../index.js';
import { CliError } from '../cli-error.js';
import type { ConnectionFlags } from '../connection.js';
import { QUICK_CONNECT_TIMEOUT_MS, addConnectionOptions, withClient } from '../connection.js';
import { EXIT, exitCodesHelp } from '../exit-codes.js';
import { holdingText, table } from '../contender-format.js';
import { parsePositiveInteger, parseZnodePath } from '../parse-values.js';
import { isSemaphore } from '../semaphore-layout.js';
import { kazooSemaphoreLock } from '../../recipes/inspect.js';
import { DEFAULT_MAX_NODES, DEFAULT_TREE_ROOT } from '../tree-walk.js';

interface LsFlags extends ConnectionFlags {
  json?: boolean;
  maxNodes: number;
}

interface LockSummary {
  lockPath: string;
  holders: number;
  waiters: number;
  holder?: string;
  /** How the first holder's hold is shown (see holdingText). */
  holding?: string;
  /** At least this long (exactly, when heldExact); absent when nothing dates the hold. */
  heldForMs?: number;
  heldExact?: boolean;
}

const EXAMPLES = `
Examples:
  zklock ls                 # every lock in the ensemble
  zklock ls /locks --json

A lock is a znode whose children are lock contenders (zklock, Curator or kazoo names) or a
semaphore (leases/ and locks/ children). /zookeeper is skipped.
`;

export function lsCommand(): Command {
  const command = new Command('ls')
    .description('list the locks under a root with holder and waiter counts')
    .argument('[root]', 'where to start', parseZnodePath, DEFAULT_TREE_ROOT)
    .option('--json', 'print a JSON array')
    .addOption(new Option('--max-nodes <n>', 'stop walking after this many znodes').argParser(parsePositiveInteger).default(DEFAULT_MAX_NODES));
  addConnectionOptions(command, QUICK_CONNECT_TIMEOUT_MS);
  return command.addHelpText('after', `${EXAMPLES}\n${exitCodesHelp('zookeeper')}`).action(async (root: string, flags: LsFlags) => {
    process.exitCode = await withClient(flags, async (client, signal) => {
      const locks = await findLocks(client, root, flags.maxNodes, signal);
      if (flags.json) {
        process.stdout.write(`${JSON.stringify(locks, null, 2)}\n`);
      } else if (locks.length === 0) {
        process.stdout.write(`no locks under ${root}\n`);
      } else {
        const rows = locks.map((l) => [l.lockPath, String(l.holders), String(l.waiters), l.holder ? `${l.holder} for ${l.holding}` : '-']);
        process.stdout.write(`${table(['LOCK', 'HOLDERS', 'WAITERS', 'HELD BY'], rows)}\n`);
      }
    });
  });
}

/** Breadth-first, so a huge tree fills --max-nodes with the shallow (likelier) lock roots first. */
async function findLocks(client: ZooKeeperClient, root: string, maxNodes: number, signal: AbortSignal): Promise<LockSummary[]> {
  const found: LockSummary[] = [];
  const besideSemaphores = new Set<string>();
  const queue = [root];
  let visited = 0;
  while (queue.length > 0) {
    signal.throwIfAborted();
    const path = queue.shift() as string;
    if (++visited > maxNodes) {
      process.stderr.write(`zklock: stopped after ${maxNodes} znodes (--max-nodes); the list may be incomplete\n`);
      break;
    }
    let children: string[];
    try {
      children = (await client.getChildren(path, { signal })).children;
    } catch (error) {
      if (error instanceof ZooKeeperError && error.code === 'NONODE') {
        if (path === root) throw new CliError(`no znode at ${root}`, EXIT.FAILURE);
        continue; // deleted while we walked
      }
      throw error;
    }
    if (besideSemaphores.has(path)) continue;
    const semaphore = await isSemaphore(client, path, children, signal);
    if (semaphore || children.some((c) => parseContender(c) !== undefined)) {
      found.push(await summarize(client, path, semaphore ? 'semaphore' : 'queue'));
      // A kazoo semaphore's waiters queue in a kazoo Lock beside it (a later sibling): a part of it, no lock of its own.
      if (semaphore) besideSemaphores.add(kazooSemaphoreLock(path));
      continue;
    }
    for (const child of children.sort()) {
      const childPath = joinPath(path, child);
      if (childPath !== '/zookeeper') queue.push(childPath);
    }
  }
  return found.sort((a, b) => a.lockPath.localeCompare(b.lockPath));
}

async function summarize(client: ZooKeeperClient, lockPath: string, kind: LockState['kind']): Promise<LockSummary> {
  const state = await inspectLock(client, lockPath, { kind });
  const first = state.holders[0];
  const now = Date.now();
  return {
    lockPath,
    holders: state.holders.length,
    waiters: state.waiters.length,
    ...(first ? { holder: first.owner.id, holding: holdingText(first, now) } : {}),
    ...(first?.heldSince ? { heldForMs: now - first.heldSince.getTime(), heldExact: first.heldSinceExact === true } : {}),
  };
}
