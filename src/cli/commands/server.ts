import { Command, InvalidArgumentError, Option } from 'commander';
import { ZooKeeperEnsemble, ZooKeeperServer } from '../../testing/index.js';
import { EXIT, exitCodesHelp } from '../exit-codes.js';
import { parsePort, parsePositiveDuration } from '../parse-values.js';
import { interruptSignal, signalExitCode } from '../signals.js';

interface ServerFlags {
  ensemble?: 3 | 5;
  tickTime?: number;
  tls?: boolean;
  port?: number;
}

const EXAMPLES = `
Examples:
  zklock server                        # one server; prints e.g. 127.0.0.1:41234
  zklock server --port 2181            # on 127.0.0.1:2181, where the library and zklock look by default
  zklock server --ensemble 3           # three members on free loopback ports
  zklock server > zk.txt & sleep 3; ZOOKEEPER_CONNECT=$(head -1 zk.txt) zklock ls

For development and tests only: the servers listen on 127.0.0.1, keep their data in a temporary
directory and are removed on exit. Needs Java 11+ and ZooKeeper 3.5+ (see the README). The first
line on stdout is the connect string; Ctrl-C (or SIGTERM/SIGHUP) stops everything.
`;

function parseListenPort(text: string): number {
  const port = parsePort(text);
  if (port === 0) throw new InvalidArgumentError('a port from 1 to 65535; leave --port out for a free one');
  return port;
}

function parseEnsembleSize(text: string): 3 | 5 {
  if (text === '3' || text === '5') return Number(text) as 3 | 5;
  throw new InvalidArgumentError(`an ensemble has 3 or 5 members, got "${text}"`);
}

export function serverCommand(): Command {
  return new Command('server')
    .description('run a local ZooKeeper server or ensemble in the foreground (for development)')
    .addOption(new Option('--ensemble <members>', 'start an ensemble of 3 or 5 members instead of one server').argParser(parseEnsembleSize))
    .addOption(new Option('--tick-time <duration>', 'ZooKeeper\'s tickTime (sessions may be 2-20 ticks)').argParser(parsePositiveDuration))
    .addOption(new Option('--port <port>', 'the client port on 127.0.0.1 (default: a free one); one server only').argParser(parseListenPort).conflicts('ensemble'))
    .option('--tls', 'also serve TLS on a secure port, with a throwaway self-signed certificate')
    .addHelpText('after', `${EXAMPLES}\n${exitCodesHelp('local')}`)
    .action(async (flags: ServerFlags) => {
      process.exitCode = await serve(flags);
    });
}

async function serve(flags: ServerFlags): Promise<number> {
  using interrupt = interruptSignal();
  const options = { ...(flags.tickTime ? { tickTime: flags.tickTime } : {}), ...(flags.tls ? { tls: true } : {}) };
  const running = flags.ensemble
    ? await ZooKeeperEnsemble.start({ ...options, size: flags.ensemble })
    : await ZooKeeperServer.start({ ...options, ...(flags.port === undefined ? {} : { port: flags.port }) });
  try {
    process.stdout.write(`${running.connectString}\n`);
    if (running instanceof ZooKeeperServer && running.securePort !== undefined) process.stderr.write(`TLS on 127.0.0.1:${running.securePort}\n`);
    process.stderr.write(`zklock: ${flags.ensemble ? `${flags.ensemble}-member ensemble` : 'ZooKeeper server'} running; Ctrl-C to stop\n`);
    // Its ports are free ones, not 2181: the examples and the CLI find it through $ZOOKEEPER_CONNECT.
    process.stderr.write(`zklock: to use it from another shell: export ZOOKEEPER_CONNECT=${running.connectString}\n`);
    // The harness does not keep the event loop alive (its JVMs are unref'd), so this timer does until a signal comes.
    const keepAlive = setInterval(() => undefined, 1 << 30);
    await new Promise<void>((resolve) => interrupt.signal.addEventListener('abort', () => resolve(), { once: true }));
    clearInterval(keepAlive);
    process.stderr.write('zklock: stopping\n');
  } finally {
    await running.stop();
  }
  const by = interrupt.received();
  return by === 'SIGINT' || by === 'SIGTERM' ? EXIT.OK : by ? signalExitCode(by) : EXIT.OK;
}
