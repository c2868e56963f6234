import { Command } from 'commander';
import type { LockState, ZooKeeperClient } from '../../index.js';
import { ZooKeeperError, parseContender, requestRevocation } from '../../index.js';
import { listensForRevocation, ownerOf } from '../../recipes/lease/revocation.js';
import { CliError } from '../cli-error.js';
import { contenderPath } from '../contender-node.js';
import type { ConnectionFlags } from '../connection.js';
import { QUICK_CONNECT_TIMEOUT_MS, addConnectionOptions, withClient } from '../connection.js';
import { EXIT, exitCodesHelp } from '../exit-codes.js';
import { parseZnodePath } from '../parse-values.js';
import { inspectLockAt } from '../semaphore-layout.js';

interface RevokeFlags extends ConnectionFlags {
  node?: string;
}

const EXAMPLES = `
Examples:
  zklock revoke /locks/backup                      # ask the holder(s) to let go
  zklock revoke /locks/backup --node _c_5e0c…-lock-0000000012
  zklock revoke /locks/backup --node /locks/backup/_c_5e0c…-lock-0000000012

A polite request, in Apache Curator's revocation protocol (Revoker.attemptRevoke): it writes
__REVOKE__ into the contender's node (into a zklock node, its owner data marked, so status
still shows who holds it). A holder whose lock is revocable (zklock's { revocable: true },
\`zklock exec --revocable\`, Curator's makeRevocable) hears of it and decides when to release;
any other keeps the lock. A zklock contender's node says whether it listens: one that does not
is not asked (exit 1). To take a lock away by force, see \`zklock release --force\`.
`;

export function revokeCommand(): Command {
  const command = new Command('revoke')
    .description('ask the holder of a lock (or a named contender) to release it (Curator\'s revocation protocol)')
    .argument('<lock-path>', 'the lock\'s znode path', parseZnodePath)
    .option('--node <name>', 'ask this contender (its node name as `zklock status` shows it, or its full path) instead of the holder(s)');
  addConnectionOptions(command, QUICK_CONNECT_TIMEOUT_MS);
  return command.addHelpText('after', `${EXAMPLES}\n${exitCodesHelp('zookeeper')}`).action(async (lockPath: string, flags: RevokeFlags) => {
    process.exitCode = await withClient(flags, async (client, signal) => {
      const asked = flags.node === undefined ? await holdersOf(client, lockPath) : [{ path: await contenderPath(client, lockPath, flags.node), role: 'contender' }];
      // Each node answered for on its own: one holder gone (released meanwhile) does not keep the others from being asked.
      let unasked = 0;
      for (const { path, role } of asked) {
        const name = path.slice(path.lastIndexOf('/') + 1);
        if (!parseContender(name)) throw new CliError(`${path} is not a lock contender node (zklock, Curator or kazoo name): only a contender can be asked to let go`, EXIT.USAGE);
        const answer = await ask(client, path, signal);
        if (answer.asked) process.stdout.write(`revocation requested of ${role} ${path} (${answer.owner}): ${answer.listens ? 'it listens (revocable)' : 'not zklock\'s: it hears only if its lock is revocable (Curator\'s makeRevocable)'}\n`);
        else unasked++;
      }
      return unasked === 0 ? EXIT.OK : EXIT.FAILURE;
    });
  });
}

async function holdersOf(client: ZooKeeperClient, lockPath: string): Promise<{ path: string; role: string }[]> {
  let state: LockState;
  try {
    state = await inspectLockAt(client, lockPath);
  } catch (error) {
    if (error instanceof ZooKeeperError && error.code === 'NONODE') throw new CliError(`no lock at ${lockPath}`, EXIT.FAILURE);
    throw error;
  }
  // A semaphore's leases are not queue contenders: neither Curator nor zklock revokes them. Its
  // contenders live one level down (leases/, locks/), which tells it even when nobody holds it.
  if (state.kind === 'semaphore') throw new CliError(`${lockPath} is a semaphore: its leases cannot be revoked`, EXIT.USAGE);
  if (state.holders.length === 0) throw new CliError(`${lockPath} is free: nobody to ask`, EXIT.FAILURE);
  return state.holders.map((h) => ({ path: h.path, role: 'holder' }));
}

/**
 * Asks one contender, unless its node shows it does not listen (a zklock lock that is not
 * revocable): the request would change nothing but the node, and the caller would think it sent.
 */
async function ask(client: ZooKeeperClient, path: string, signal: AbortSignal): Promise<{ asked: boolean; owner?: string; listens?: boolean }> {
  const data = await client.getData(path, { signal }).then(
    (read) => read.data,
    (error: unknown) => {
      if (error instanceof ZooKeeperError && error.code === 'NONODE') return undefined;
      throw error;
    },
  );
  if (data !== undefined) {
    const owner = ownerOf(data).id;
    const listens = listensForRevocation(data);
    if (listens === false) {
      process.stderr.write(`${path} (${owner}) does not listen for revocation requests (its lock is not revocable): nothing asked; \`zklock release --force\` takes the lock away\n`);
      return { asked: false };
    }
    if (await requestRevocation(client, path, { signal })) return { asked: true, owner, listens: listens === true };
  }
  process.stderr.write(`${path} does not exist (already released?); nothing asked\n`);
  return { asked: false };
}
