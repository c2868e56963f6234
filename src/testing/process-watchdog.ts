import { spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import { HarnessError } from './harness-error.js';
import { WATCHDOG_SCRIPT } from './watchdog-script.js';

/** The JVM system property that names the Node.js process owning a harness JVM. */
export const HARNESS_OWNER_PROPERTY = 'zklock.harness.owner';

/** The JVM argument that marks a JVM as owned by this process; findable with `ps`. */
export const OWNER_MARKER = `-D${HARNESS_OWNER_PROPERTY}=${process.pid}`;

type WatchdogMessage =
  | { readonly op: 'pid+' | 'pid-'; readonly value: number }
  | { readonly op: 'dir+' | 'dir-'; readonly value: string };

let input: Socket | undefined;

function spawnWatchdog(): Socket {
  const env = { ...process.env };
  // The helper is plain CommonJS: no loaders, and it must not think it is a test file.
  delete env.NODE_OPTIONS;
  delete env.NODE_TEST_CONTEXT;
  // The property and pid go separately, never as the marker, so `ps` never mistakes the watchdog for a harness JVM.
  const child = spawn(process.execPath, ['-e', WATCHDOG_SCRIPT, HARNESS_OWNER_PROPERTY, String(process.pid)], {
    // Own session: a Ctrl-C aimed at the test run must not kill the watchdog before it cleans up.
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
    cwd: '/',
    env,
  });
  if (child.pid === undefined || child.stdin === null) {
    throw new HarnessError('WATCHDOG_UNAVAILABLE', `Could not start the cleanup watchdog (${process.execPath})`, {
      cause: 'spawn returned no pid',
    });
  }
  // child.stdin of a 'pipe' stdio is a net.Socket at runtime; the typings only promise a Writable.
  const pipe = child.stdin as Socket;
  // Neither the helper nor its pipe may keep the owner alive: the owner exiting is the signal.
  child.unref();
  pipe.unref();
  // A dead watchdog only costs us the post-mortem cleanup; it must never crash the owner.
  pipe.on('error', () => undefined);
  child.on('error', () => undefined);
  return pipe;
}

function send(message: WatchdogMessage): void {
  input ??= spawnWatchdog();
  input.write(`${JSON.stringify(message)}\n`);
}

/** Asks the watchdog to SIGKILL `pid` if this process dies first. */
export function watchPid(pid: number): void {
  send({ op: 'pid+', value: pid });
}

/** `pid` exited normally; the watchdog must forget it (pids get recycled). */
export function unwatchPid(pid: number): void {
  send({ op: 'pid-', value: pid });
}

/** Asks the watchdog to remove `dir` if this process dies first. */
export function watchDir(dir: string): void {
  send({ op: 'dir+', value: dir });
}

/** `dir` has been removed by its owner. */
export function unwatchDir(dir: string): void {
  send({ op: 'dir-', value: dir });
}
