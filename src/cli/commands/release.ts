import { Command } from 'commander';
import type { Stat } from '../../index.js';
import { ZooKeeperError, isRevocationRequest } from '../../index.js';
import { ownerOf } from '../../recipes/lease/revocation.js';
import { CliError } from '../cli-error.js';
import { confirm } from '../confirm.js';
import { contenderPath } from '../contender-node.js';
import { isContenderNode } from '../contender-names.js';
import { ownerLabel, table } from '../contender-format.js';
import type { ConnectionFlags } from '../connection.js';
import { QUICK_CONNECT_TIMEOUT_MS, addConnectionOptions, withClient } from '../connection.js';
import { EXIT, exitCodesHelp } from '../exit-codes.js';
import { parseZnodePath } from '../parse-values.js';
import { formatAge } from '../timing.js';
import { hexId } from '../../client/diagnostics.js';

interface ReleaseFlags extends ConnectionFlags {
  force?: boolean;
  yes?: boolean;
}

const EXAMPLES = `
Examples:
  zklock status /locks/backup                     # find the stuck contender's node
  zklock release --force /locks/backup/_c_5e0c…-lock-0000000012
  zklock release --force /locks/backup _c_5e0c…-lock-0000000012   # the lock path and the NODE status shows
  zklock release --force --yes /locks/encoders/leases/_c_…-lease-0000000003

Deleting a contender's node ends its hold (or its place in the queue): the next waiter gets the
lock. The holder, if it still runs, sees its lease's signal abort (NODE_DELETED); a holder that
does not check it may keep working, so prefer stopping the process first.
`;

export function releaseCommand(): Command {
  const command = new Command('release')
    .description('operator tool: forcibly remove a stuck lock contender\'s node')
    .argument('<node>', 'the contender\'s full znode path, or the lock\'s path followed by the node name `zklock status` shows', parseZnodePath)
    .argument('[name]', 'the contender\'s node name (as `zklock status` shows it) when <node> is the lock\'s path')
    .option('--force', 'required: says you mean to delete someone else\'s lock node')
    .option('-y, --yes', 'do not ask for confirmation');
  addConnectionOptions(command, QUICK_CONNECT_TIMEOUT_MS);
  return command.addHelpText('after', `${EXAMPLES}\n${exitCodesHelp('zookeeper')}`).action(async (given: string, named: string | undefined, flags: ReleaseFlags) => {
    if (!flags.force) throw new CliError('release deletes another process\'s lock node: pass --force to confirm that is what you want', EXIT.USAGE);
    const name = named ?? given.slice(given.lastIndexOf('/') + 1);
    if (!isContenderNode(name.slice(name.lastIndexOf('/') + 1))) {
      throw new CliError(`${named ?? given} is not a lock contender node (zklock, Curator or kazoo name); refusing to delete it`, EXIT.USAGE);
    }
    process.exitCode = await withClient(flags, async (client, signal) => {
      const node = named === undefined ? given : await contenderPath(client, given, named);
      let found;
      try {
        found = await client.getData(node, { signal });
      } catch (error) {
        if (error instanceof ZooKeeperError && error.code === 'NONODE') throw new CliError(`${node} does not exist (already released?)`, EXIT.FAILURE);
        throw error;
      }
      const sure = await confirm(question(node, found), flags.yes ?? false, signal);
      if (!sure) throw new CliError('not confirmed; nothing deleted', EXIT.USAGE);
      try {
        await client.delete(node, { version: found.stat.version, signal });
      } catch (error) {
        if (error instanceof ZooKeeperError && error.code === 'NONODE') {
          process.stdout.write(`${node} was already gone\n`);
          return;
        }
        throw error;
      }
      process.stdout.write(`deleted ${node}\n`);
    });
  });
}

/**
 * The node as `status` shows a contender (owner, age, fencing token, session), and what deleting
 * it does not do: stop a holder that is still running.
 */
function question(node: string, found: { data: Buffer; stat: Stat }): string {
  const owner = ownerLabel(ownerOf(found.data).id || '(no owner data)', isRevocationRequest(found.data));
  const rows = [
    ['OWNER', 'AGE', 'FENCING TOKEN', 'SESSION'],
    [owner, formatAge(Date.now() - found.stat.ctime), found.stat.czxid.toString(), hexId(found.stat.ephemeralOwner)],
  ] as const;
  return [
    `${node}`,
    table(rows[0], [rows[1]]),
    'Warning: a holder that still runs is told (its lease signal aborts) but may go on working until it',
    'stops: `zklock exec` gives its command SIGTERM, and SIGKILL only after --grace (default 10s). The next',
    'waiter may hold the lock meanwhile; only a fencing token check keeps the two apart.',
    'Delete it?',
  ].join('\n');
}
