import { Command } from 'commander';
import { ZooKeeperError } from '../../index.js';
import { CliError } from '../cli-error.js';
import type { ConnectionFlags } from '../connection.js';
import { QUICK_CONNECT_TIMEOUT_MS, addConnectionOptions, withClient } from '../connection.js';
import { EXIT, exitCodesHelp } from '../exit-codes.js';
import { contenderJson, contenderRow, table } from '../contender-format.js';
import { parseZnodePath } from '../parse-values.js';
import { inspectLockAt } from '../semaphore-layout.js';

interface StatusFlags extends ConnectionFlags {
  json?: boolean;
}

const EXAMPLES = `
Examples:
  zklock status /locks/backup
  zklock status --json /locks/encoders | jq '.holders[0].owner'

Holders come first, then waiters in the order they will get the lock. Works for zklock's,
Curator's and kazoo's mutexes, read/write locks and semaphores. QUEUED is the time since a
contender joined the queue; HOLDING how long a holder has held, from what the server records:
"≥ 2s" when only a lower bound is known, "≤ 1m46s" when only its time in the queue bounds it.
`;

export function statusCommand(): Command {
  const command = new Command('status')
    .description('show who holds a lock and who waits, in order')
    .argument('<lock-path>', 'the lock\'s znode path', parseZnodePath)
    .option('--json', 'print JSON: { lockPath, holders: [...], waiters: [...] }');
  addConnectionOptions(command, QUICK_CONNECT_TIMEOUT_MS);
  return command.addHelpText('after', `${EXAMPLES}\n${exitCodesHelp('zookeeper')}`).action(async (lockPath: string, flags: StatusFlags) => {
    process.exitCode = await withClient(flags, async (client) => {
      let state;
      try {
        // As ls and the ui tell: a `locks` child alone does not make a semaphore (see isSemaphore).
        state = await inspectLockAt(client, lockPath);
      } catch (error) {
        if (error instanceof ZooKeeperError && error.code === 'NONODE') throw new CliError(`no lock at ${lockPath}`, EXIT.FAILURE);
        throw error;
      }
      const now = Date.now();
      if (flags.json) {
        const json = { lockPath, holders: state.holders.map((c) => contenderJson(c, true, now)), waiters: state.waiters.map((c) => contenderJson(c, false, now)) };
        process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
        return;
      }
      if (state.holders.length + state.waiters.length === 0) {
        process.stdout.write(`${lockPath}: free (no holders, no waiters)\n`);
        return;
      }
      const rows = [...state.holders.map((c) => contenderRow('holder', c, true, now)), ...state.waiters.map((c, i) => contenderRow(`waiter ${i + 1}`, c, false, now))];
      process.stdout.write(`${lockPath}\n${table(['ROLE', 'OWNER', 'HOLDING', 'QUEUED', 'FENCING TOKEN', 'KIND', 'NODE'], rows)}\n`);
    });
  });
}
