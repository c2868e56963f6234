import { Command, Option } from 'commander';
import { CliError } from '../cli-error.js';
import { runDemo } from '../demo/run-demo.js';
import { EXIT, exitCodesHelp } from '../exit-codes.js';
import { parseDuration, parsePositiveInteger } from '../parse-values.js';
import { interruptSignal, signalExitCode } from '../signals.js';

interface DemoFlags {
  workers: number;
  locks: number;
  duration: number;
}

const EXAMPLES = `
Examples:
  zklock demo                        # well under a minute (npx zklock demo in a project that installed zklock)
  zklock demo --workers 8 --locks 2 --duration 20s

Needs Java 11+ and ZooKeeper 3.5+ on this machine: Debian's zookeeper package, or ZOOKEEPER_HOME
set to an unpacked Apache ZooKeeper release (see the README). Starts a local 3-member ensemble, runs worker
processes that contend for the locks through the library, each recording every hold (worker, lock,
fencing token, start and end), shows who holds and who waits, kills the ensemble leader a third of the way in,
then checks the records: one holder at a time per lock, fencing tokens increasing, no node left.
Exits 1 when a check fails.
`;

export function demoCommand(): Command {
  return new Command('demo')
    .description('run a self-checking demo: workers contend for locks on a local ensemble while its leader is killed')
    .addOption(new Option('--workers <n>', 'worker processes').argParser(parsePositiveInteger).default(5))
    .addOption(new Option('--locks <n>', 'locks they contend for').argParser(parsePositiveInteger).default(3))
    .addOption(new Option('--duration <duration>', 'how long the workers run (stretched to show work after the new leader is elected)').argParser(parseDuration).default(16_000, '16s'))
    .addHelpText('after', `${EXAMPLES}\n${exitCodesHelp('local')}`)
    .action(async (flags: DemoFlags) => {
      if (flags.duration < 3000) throw new CliError('--duration must be at least 3s: the leader is killed a third of the way in', EXIT.USAGE);
      using interrupt = interruptSignal();
      try {
        const passed = await runDemo({ workers: flags.workers, locks: flags.locks, durationMs: flags.duration, signal: interrupt.signal });
        process.exitCode = passed ? EXIT.OK : EXIT.FAILURE;
      } catch (error) {
        const by = interrupt.received();
        if (!by) throw error;
        process.stderr.write(`zklock: demo interrupted by ${by}; workers and ensemble stopped\n`);
        process.exitCode = signalExitCode(by);
      }
    });
}
