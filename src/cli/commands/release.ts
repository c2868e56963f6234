import { Command } from 'commander';
import { REVOKED_OWNER, ZooKeeperError, isRevocationRequest, parseContender } from '../../index.js';
import { CliError } from '../cli-error.js';
import { confirm } from '../confirm.js';
import type { ConnectionFlags } from '../connection.js';
import { addConnectionOptions, withClient } from '../connection.js';
import { EXIT, EXIT_CODES_HELP } from '../exit-codes.js';
import { parseZnodePath } from '../parse-values.js';
import { formatAge } from '../timing.js';

interface ReleaseFlags extends ConnectionFlags {
  force?: boolean;
  yes?: boolean;
}

const EXAMPLES = `
Examples:
  zklock status /locks/backup                     # find the stuck contender's node
  zklock release --force /locks/backup/_c_5e0c…-lock-0000000012
  zklock release --force --yes /locks/encoders/leases/_c_…-lease-0000000003

Deleting a contender's node ends its hold (or its place in the queue): the next waiter gets the
lock. The holder, if it still runs, sees its lease's signal abort (NODE_DELETED); a holder that
does not check it may keep working, so prefer stopping the process first.
`;

/** Semaphore lease nodes are not queue contenders, but an operator may need to free them too. */
const LEASE_NAME = /-lease-(\d{10}|-\d{9,10})$/;

export function releaseCommand(): Command {
  const command = new Command('release')
    .description('operator tool: forcibly remove a stuck lock contender\'s node')
    .argument('<node>', 'the contender\'s full znode path, as `zklock status` shows it', parseZnodePath)
    .option('--force', 'required: says you mean to delete someone else\'s lock node')
    .option('-y, --yes', 'do not ask for confirmation');
  addConnectionOptions(command);
  return command.addHelpText('after', `${EXAMPLES}\n${EXIT_CODES_HELP}`).action(async (node: string, flags: ReleaseFlags) => {
    if (!flags.force) throw new CliError('release deletes another process\'s lock node: pass --force to confirm that is what you want', EXIT.USAGE);
    const name = node.slice(node.lastIndexOf('/') + 1);
    if (!parseContender(name) && !LEASE_NAME.test(name)) {
      throw new CliError(`${node} is not a lock contender node (zklock, Curator or kazoo name); refusing to delete it`, EXIT.USAGE);
    }
    process.exitCode = await withClient(flags, async (client, signal) => {
      let found;
      try {
        found = await client.getData(node, { signal });
      } catch (error) {
        if (error instanceof ZooKeeperError && error.code === 'NONODE') throw new CliError(`${node} does not exist (already released?)`, EXIT.FAILURE);
        throw error;
      }
      const age = formatAge(Date.now() - found.stat.ctime);
      const owner = isRevocationRequest(found.data) ? REVOKED_OWNER : found.data.toString('utf8') || '(no owner data)';
      const sure = await confirm(`Delete ${node}\n  owner ${owner}\n  session 0x${found.stat.ephemeralOwner.toString(16)}, age ${age}?`, flags.yes ?? false, signal);
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
