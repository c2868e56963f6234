import { once } from 'node:events';
import { Command, Option } from 'commander';
import type { ConnectionFlags } from '../connection.js';
import { QUICK_CONNECT_TIMEOUT_MS, addConnectionOptions, withClient } from '../connection.js';
import { exitCodesHelp } from '../exit-codes.js';
import { signalExitCode } from '../signals.js';
import { DEFAULT_MAX_NODES, DEFAULT_TREE_ROOT } from '../tree-walk.js';
import { parsePort, parsePositiveInteger, parseZnodePath } from '../parse-values.js';
import { AdminActions } from '../ui/admin.js';
import { LiveTree } from '../ui/live-tree.js';
import type { Identity } from '../ui/ui-server.js';
import { UiServer } from '../ui/ui-server.js';

interface UiFlags extends ConnectionFlags {
  root: string;
  port: number;
  host: string;
  allowAdmin?: boolean;
  maxNodes: number;
}

const EXAMPLES = `
Examples:
  zklock ui --root /locks                 # then open the address it prints
  zklock ui --port 8080 --allow-admin     # with revoke / force release buttons

Shows every lock under the root (zklock's, Curator's and kazoo's mutexes, read/write locks,
semaphores, simple locks): holders, waiters in queue order, how long each has waited, and a
timeline of handoffs. Changes arrive through one persistent recursive watch on the root
(ZooKeeper 3.6+; older servers are polled every second). Serves on 127.0.0.1 unless --host
says otherwise; the address it prints carries a secret (?token=) the page needs, so share it
as you would the credentials it connects with. Admin actions ask for confirmation in the page
and are logged here.
`;

function identityOf(flags: ConnectionFlags): Identity {
  const tls = Boolean(flags.tls || flags.tlsCa || flags.tlsCert || flags.tlsKey || flags.tlsInsecure);
  // digest's credentials are user:password: the user alone says who we are.
  const auth = (flags.auth ?? []).map((a) => (a.scheme === 'digest' ? `digest:${a.auth.split(':')[0] ?? ''}` : a.scheme));
  return { connect: flags.connect, tls, auth };
}

export function uiCommand(): Command {
  const command = new Command('ui')
    .description('serve a live web page of every lock under a root')
    .addOption(new Option('--root <path>', 'where the locks are').argParser(parseZnodePath).default(DEFAULT_TREE_ROOT))
    .addOption(new Option('--port <n>', 'HTTP port (0: any free one)').argParser(parsePort).default(0))
    .option('--host <address>', 'address to serve on', '127.0.0.1')
    .option('--allow-admin', 'enable the page\'s revoke and force-release buttons')
    .addOption(new Option('--max-nodes <n>', 'stop walking the tree after this many znodes').argParser(parsePositiveInteger).default(DEFAULT_MAX_NODES));
  addConnectionOptions(command, QUICK_CONNECT_TIMEOUT_MS);
  return command.addHelpText('after', `${EXAMPLES}\n${exitCodesHelp('zookeeper')}`).action(async (flags: UiFlags) => {
    process.exitCode = await withClient(flags, async (client, signal, received) => {
      const tree = new LiveTree(client, flags.root, flags.maxNodes);
      const log = (line: string): void => void process.stdout.write(`${line}\n`);
      const admin = flags.allowAdmin ? new AdminActions(client, tree.model, log) : undefined;
      const server = await UiServer.start({ host: flags.host, port: flags.port, tree, identity: identityOf(flags), ...(admin ? { admin } : {}) });
      // Without the address's secret, and taken now: a closed server has no port.
      const origin = new URL(server.url).origin;
      try {
        log(`zklock ui: ${server.url} (locks under ${flags.root}${admin ? ', admin actions on' : ''}; Ctrl-C to stop)`);
        await tree.start();
        if (!signal.aborted) await once(signal, 'abort');
      } finally {
        await tree.stop();
        await server.close();
      }
      // Stopped by a signal, as every command is: 130 for Ctrl-C, so a script can tell; said on
      // stderr as server and demo say it.
      const by = received();
      if (!by) return undefined;
      process.stderr.write(`zklock: ui interrupted by ${by}; stopped serving ${origin}\n`);
      return signalExitCode(by);
    });
  });
}
