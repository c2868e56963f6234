import { hostname } from 'node:os';
import { Command, Option } from 'commander';
import type { ACL, Layout, Lease, ZooKeeperClient } from '../../index.js';
import { LockError, LockLostError } from '../../index.js';
import { anySignal } from '../../recipes/support/any-signal.js';
import { heldData } from '../../recipes/support/owner-data.js';
import { CliError, messageOf } from '../cli-error.js';
import type { ConnectionFlags } from '../connection.js';
import { addConnectionOptions, closeClient, connectClient } from '../connection.js';
import { EXIT, exitCodesHelp } from '../exit-codes.js';
import { selectLock } from '../lock-kind.js';
import { parseAcl, parseDuration, parseLongDuration, parsePositiveDuration, parsePositiveLongDuration, parsePositiveInteger, parseSignal, parseZnodePath } from '../parse-values.js';
import { checkCommand, runChild } from '../run-child.js';
import type { ForwardedSignal } from '../signals.js';
import { SignalRouter, interrupted, signalExitCode } from '../signals.js';
import { bounded } from '../timing.js';
import { OutageReport } from '../outage-report.js';
import { WaitProgress } from '../wait-progress.js';

interface ExecFlags extends ConnectionFlags {
  timeout?: number;
  try?: boolean;
  read?: boolean;
  write?: boolean;
  limit?: number;
  layout: Layout;
  grace: number;
  maxHold?: number;
  forceReleaseAfter?: number;
  lockDelay?: number;
  acl?: ACL[];
  verbose?: boolean;
  owner?: string;
  revocable?: boolean;
  revocableSignal?: NodeJS.Signals;
}

const EXAMPLES = `
Examples:
  zklock exec /locks/backup -- ./backup.sh --full
  zklock exec --try /locks/cron-report -- node report.js      # exit 73 if another run holds it
  zklock exec --timeout 30s --write /locks/schema -- npm run migrate
  zklock exec --limit 2 /locks/encoders -- ffmpeg -i in.mp4 out.webm
  zklock exec --max-hold 10m /locks/nightly -- ./etl.sh       # exit 124 if it runs longer
  zklock exec --lock-delay 15s /locks/printer -- ./print.sh    # after a crashed holder, wait 15s first
  zklock exec --owner nightly-etl /locks/db -- ./etl.sh        # status, ls and the ui name it so
  zklock exec --revocable=SIGUSR1 /locks/db -- ./etl.sh       # zklock revoke /locks/db sends it SIGUSR1
  ZOOKEEPER_CONNECT=zk1:2181,zk2:2181 zklock exec --auth digest:ops:secret /locks/db -- ./maintain

The command gets ZKLOCK_FENCING_TOKEN (grows with every acquisition of the lock; hand it to the
resource you protect), ZKLOCK_NODE (our lock node) and ZKLOCK_LOCK_PATH in its environment.
SIGINT, SIGTERM and SIGHUP sent to zklock are passed to the command. If the lock is lost while the
command runs (session expired, node deleted), the command gets SIGTERM, then SIGKILL after --grace,
and zklock exits with 75. With --max-hold, a command still running when that much time has passed
since the lock was acquired is stopped the same way, the lock released, and zklock exits with 124,
whether or not SIGKILL was needed (coreutils' timeout exits 137 then). --force-release-after
deletes the lock node that much later even if the command has not exited yet (stuck in the
kernel, say), so the lock does not stay taken; one shorter than --grace can let the next holder
in while the command is still in its SIGTERM grace. --lock-delay (a mutex only) runs the command
that long after the last holder's node went when it did not release the lock itself (its session
expired: a crash, a partition; or someone deleted its node), so that an old holder cut off from
ZooKeeper has time to stop; after a clean release by a holder with the same --lock-delay the
command starts at once, while a new lock path, or a last holder without one, waits once too: give
every holder of the lock the same --lock-delay. --try never waits for the lock, so it takes no
--timeout; Ctrl-C ends a lock-delay it serves. With ZooKeeper out of reach, exec says on stderr
which hosts it waits for, each connection error, and every 10s for how long; once its session
expired, a waiting exec exits 69 when no new session comes within --connect-timeout. --acl sets
the ACL of every node the lock creates (its path and parents when missing, our contender or lease
node), as zkCli writes one, e.g.
creator-all-read,digest:ops:HASH:w (HASH: base64 of sha1 of ops:password); the identities given
with --auth are the creator that auth entries and the creator-* presets name (see the README,
"Locks on a shared ensemble"). Without it: world:anyone:cdrwa, as before.
`;

export function execCommand(): Command {
  const command = new Command('exec')
    .description('acquire a lock, run a command holding it, release it')
    .argument('<lock-path>', 'the lock\'s znode path, e.g. /locks/backup', parseZnodePath)
    .argument('<command...>', 'the command and its arguments (put them after --)')
    .addOption(new Option('-t, --timeout <duration>', 'give up (exit 74) when not acquired within this time; default: wait until Ctrl-C').argParser(parseLongDuration))
    .option('--try', 'do not wait: exit 73 at once when the lock is taken')
    .option('-r, --read', 'take the shared side of a read/write lock')
    .option('-w, --write', 'take the exclusive side of a read/write lock')
    .addOption(new Option('-l, --limit <n>', 'a semaphore: up to n holders at once').argParser(parsePositiveInteger))
    .addOption(new Option('--layout <layout>', 'node names compatible with Curator or kazoo (Python)').choices(['curator', 'kazoo']).default('curator'))
    .addOption(new Option('--grace <duration>', 'after a lost lock (or --max-hold), time between SIGTERM and SIGKILL (0: at once)').argParser(parseDuration).default(10_000, '10s'))
    .addOption(new Option('--max-hold <duration>', 'stop the command (exit 124) once it has held the lock this long').argParser(parsePositiveLongDuration))
    .addOption(new Option('--force-release-after <duration>', 'with --max-hold: delete the lock node this long after it passed, even if the command has not exited').argParser(parsePositiveLongDuration))
    .addOption(new Option('--lock-delay <duration>', 'a mutex: after a holder that did not release the lock (crashed, partitioned), wait this long before running the command').argParser(parsePositiveDuration))
    .option('--owner <name>', 'who we are in our lock node, as status, ls and the ui show it (the library\'s ownerId); default host:pid')
    .option('--revocable', 'listen for revocation requests (zklock revoke): on one, send the command SIGTERM (--revocable=SIGNAL: that signal), then SIGKILL after --grace')
    .addOption(new Option('--revocable-signal <signal>').argParser(parseSignal).hideHelp())
    .addOption(new Option('--acl <acl>', 'ACL of every node the lock creates: scheme:id:perms entries (perms from cdrwa) or presets creator-all-read, creator-all, open, comma-separated').argParser(parseAcl))
    .option('-v, --verbose', 'log state changes (queue position, holder, session) to stderr')
    .passThroughOptions();
  addConnectionOptions(command);
  acceptRevocableSignal(command);
  return command.addHelpText('after', `${EXAMPLES}\n${exitCodesHelp('exec')}`).action(async (lockPath: string, argv: string[], _flags: ExecFlags, self: Command) => {
    process.exitCode = await exec(lockPath, optionsAfterPath(self, argv), self.opts<ExecFlags>());
  });
}

/**
 * `--revocable=SIGNAL` as well as a bare `--revocable`: commander's optional option values would
 * take the lock path that follows a bare one for its value. The value form becomes the hidden
 * `--revocable-signal SIGNAL`; only our options are looked at, up to the lock path or `--`
 * (what follows is the command's).
 */
function acceptRevocableSignal(command: Command): void {
  const parseOptions = command.parseOptions.bind(command);
  command.parseOptions = (argv: string[]) => {
    const ours: string[] = [];
    for (let i = 0; i < argv.length; i++) {
      const arg = argv[i] as string;
      if (arg === '--' || !arg.startsWith('-')) return parseOptions([...ours, ...argv.slice(i)]);
      const value = /^--revocable=(.*)$/s.exec(arg)?.[1];
      if (value !== undefined) {
        ours.push('--revocable', '--revocable-signal', value);
        continue;
      }
      ours.push(arg);
      // An option that takes a value: the next word is its value, not the lock path.
      if (command.options.some((o) => o.required && (o.long === arg || o.short === arg)) && i + 1 < argv.length) ours.push(argv[++i] as string);
    }
    return parseOptions(ours);
  };
}

/**
 * passThroughOptions hands everything after the lock path to the command, so that its own
 * options stay its own (`-l` is ours and ls's). Options written between the lock path and `--`
 * are still ours, as `status /x --json` accepts them: they are parsed here, and the command is
 * what follows `--`. Without a `--` there is no telling ours from the command's: a usage error.
 * `--help` there asks for our help, as it does anywhere else (no command is named `--help`).
 */
function optionsAfterPath(command: Command, argv: string[]): string[] {
  if (!argv[0]?.startsWith('-') || argv[0] === '--') return argv;
  const end = argv.indexOf('--');
  if ((end < 0 ? argv.slice(0, 1) : argv.slice(0, end)).some((arg) => arg === '--help' || arg === '-h')) command.help();
  if (end < 0) throw new CliError(`exec: "${argv[0]}" after the lock path: put options before the lock path, or the command after "--" (zklock exec [options] <lock-path> -- <command>)`, EXIT.USAGE);
  const { operands, unknown } = command.parseOptions(argv.slice(0, end));
  const stray = [...operands, ...unknown];
  if (stray.length > 0) throw new CliError(`exec: "${stray.join(' ')}" between the lock path and "--" is not an option of exec (see zklock exec --help)`, EXIT.USAGE);
  return argv.slice(end);
}

async function exec(lockPath: string, argv: string[], flags: ExecFlags): Promise<number> {
  // With passThroughOptions commander keeps the "--" that separates our options from the command's.
  const [program, ...args] = argv[0] === '--' ? argv.slice(1) : argv;
  if (program === undefined) throw new CliError('exec: no command given', EXIT.USAGE);
  // A zero deadline cannot spare even the round trips of joining the queue: it would refuse a free lock.
  if (flags.timeout === 0) throw new CliError('--timeout must be more than 0; to not wait at all, use --try', EXIT.USAGE);
  // As tryAcquire refuses a timeout: --try never waits for the lock, and a lock-delay it serves ends with Ctrl-C.
  if (flags.try && flags.timeout !== undefined) throw new CliError('--try does not wait for the lock: --timeout cannot be combined with it', EXIT.USAGE);
  if (flags.forceReleaseAfter !== undefined && flags.maxHold === undefined) throw new CliError('--force-release-after counts from the end of --max-hold: give both', EXIT.USAGE);
  const hold = { maxHold: flags.maxHold, forceReleaseAfter: flags.forceReleaseAfter };
  const revocable = flags.revocable === true || flags.revocableSignal !== undefined;
  if (flags.owner === '') throw new CliError('--owner must not be empty', EXIT.USAGE);
  const ownerId = flags.owner ?? `${hostname()}:${process.pid}`;
  checkCommand(program, process.env);
  const interrupt = new AbortController();
  let interruptedBy: ForwardedSignal | undefined;
  using router = new SignalRouter((signal) => {
    interruptedBy ??= signal;
    interrupt.abort(new Error(`interrupted by ${signal}`));
  });
  let client: ZooKeeperClient;
  try {
    client = await connectClient(flags, interrupt.signal);
  } catch (error) {
    if (interruptedBy) return interrupted(interruptedBy, `connecting to ${flags.connect}; the command was not run`);
    throw error;
  }
  const progress = new WaitProgress(client, lockPath, ownerId, { live: !flags.try && process.stderr.isTTY, verbose: flags.verbose ?? false, announce: !flags.try, kind: flags.limit === undefined ? 'queue' : 'semaphore' });
  // Ends the wait for the lock (exit 69) once an expired session finds no new one in time; a lock held meanwhile is lost anyway (exit 75).
  const outage = new AbortController();
  using _report = new OutageReport(client, {
    connect: flags.connect,
    renewWithin: flags.connectTimeout,
    say: (line) => progress.say(line),
    onGiveUp: (error) => outage.abort(error),
  });
  try {
    const lock = selectLock(client, lockPath, { ...flags, revocable }, ownerId);
    let lease: Lease;
    progress.start();
    try {
      const signal = anySignal([interrupt.signal, outage.signal]);
      const acquired = flags.try ? await lock.tryAcquire({ signal, ...hold }) : await lock.acquire({ timeout: flags.timeout, signal, ...hold });
      if (!acquired) throw new CliError(`${lockPath} is held by someone else; not running the command (--try)`, EXIT.LOCK_TAKEN);
      lease = acquired;
    } catch (error) {
      progress.stop();
      if (interruptedBy) return interrupted(interruptedBy, `waiting for ${lockPath}; the command was not run`);
      if (outage.signal.aborted) throw outage.signal.reason;
      throw timeoutError(error, lockPath, flags);
    } finally {
      progress.stop();
    }
    progress.log(`acquired the ${lock.description} ${lockPath} as ${lease.node} (fencing token ${lease.fencingToken})`);
    if (lease.lockDelayed > 0) progress.log(`the last handoff was ${lease.handoff}: waited ${Math.round(lease.lockDelayed)} ms (--lock-delay) before running the command`);
    if (interruptedBy) {
      // A signal that came as tryAcquire succeeded still means "do not run".
      await bounded(lease.release(), flags.sessionTimeout);
      return interrupted(interruptedBy, `acquiring ${lockPath}; the command was not run`);
    }
    if (lease.signal.aborted) {
      // Lost between the acquire and now (e.g. the session expired): running the command unprotected would defeat the lock.
      process.stderr.write(`zklock: ${lostMessage(lease.signal.reason, lockPath, flags.maxHold)} before the command started; not running it\n`);
      return await stoppedExit(lease, lease.signal.reason, flags);
    }
    // Beside the command's start, not before it: it dates our hold for status, ls and the ui, and is done before the release.
    const marking = markHeld(client, lease.node);
    const revokeSignal = flags.revocableSignal ?? 'SIGTERM';
    const outcome = await runChild({
      command: program,
      args,
      env: { ...process.env, ZKLOCK_FENCING_TOKEN: String(lease.fencingToken), ZKLOCK_NODE: lease.node, ZKLOCK_LOCK_PATH: lockPath },
      router,
      stopWhen: lease.signal,
      graceMs: flags.grace,
      onStopping: (reason) => process.stderr.write(`zklock: ${lostMessage(reason, lockPath, flags.maxHold)}; stopping the command (SIGTERM, SIGKILL after ${flags.grace} ms)\n`),
      ...(revocable
        ? {
            revoke: {
              when: lease.revocationRequested,
              signal: revokeSignal,
              onRevoking: () => process.stderr.write(`zklock: revocation of ${lockPath} requested; asking the command to let go (${revokeSignal}, SIGKILL after ${flags.grace} ms)\n`),
            },
          }
        : {}),
    });
    await bounded(marking, flags.sessionTimeout);
    if (outcome.stoppedBecause !== undefined) return await stoppedExit(lease, outcome.stoppedBecause, flags);
    // Bounded: if the ensemble is unreachable now, closing the client below (or the session timeout) removes the node anyway.
    const released = lease.release().then(
      () => progress.log(`released ${lease.node}`),
      (error: unknown) => process.stderr.write(`zklock: warning: releasing ${lease.node} failed (${messageOf(error)}); it goes when the session ends\n`),
    );
    await bounded(released, flags.sessionTimeout);
    return outcome.code ?? signalExitCode(outcome.signal ?? 'SIGKILL');
  } finally {
    progress.close();
    await closeClient(client);
  }
}

/**
 * Writes into our node that we hold the lock (OwnerInfo.held): the node's mtime, the server's
 * clock, then dates our hold, where the queue alone tells only when we joined it. A CLI user
 * pays these two requests; the library's acquire does not. Versioned, so a revocation request
 * written meanwhile is not lost (the mark is then left out); any failure only leaves the hold
 * undated.
 */
async function markHeld(client: ZooKeeperClient, node: string): Promise<void> {
  try {
    const read = await client.getData(node);
    const marked = heldData(read.data);
    if (marked) await client.setData(node, marked, { version: read.stat.version });
  } catch {
    // Best effort: see above.
  }
}

function timeoutError(error: unknown, lockPath: string, flags: ExecFlags): unknown {
  if (!(error instanceof LockError) || error.code !== 'LOCK_TIMEOUT') return error;
  return new CliError(`${lockPath} was not acquired within ${flags.timeout} ms; not running the command`, EXIT.TIMEOUT);
}

function isHoldExpiry(reason: unknown): boolean {
  return reason instanceof LockLostError && reason.reason === 'HOLD_EXPIRED';
}

/**
 * The exit code once the lease ended before the command did (or started): an expired hold's node
 * is still ours, so it is released first (bounded, as the normal release is); a lost one's is not.
 */
async function stoppedExit(lease: Lease, reason: unknown, flags: ExecFlags): Promise<number> {
  if (!isHoldExpiry(reason)) return EXIT.LOCK_LOST;
  await bounded(lease.release(), flags.sessionTimeout);
  return EXIT.HOLD_EXPIRED;
}

function lostMessage(reason: unknown, lockPath: string, maxHold?: number): string {
  if (isHoldExpiry(reason)) return `held the lock ${lockPath} past --max-hold (${maxHold} ms)`;
  if (reason instanceof LockLostError) return `lost the lock ${lockPath} (${reason.reason})`;
  return `lost the lock ${lockPath} (${messageOf(reason)})`;
}
