import { spawn } from 'node:child_process';
import { appendFileSync, closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { delimiter } from 'node:path';
import { fulfilsWithin, withTimeout } from './bounded-wait.js';
import { HarnessError } from './harness-error.js';
import { OWNER_MARKER, unwatchPid, watchPid } from './process-watchdog.js';

/** Everything needed to start one JVM. */
export interface JvmLaunchSpec {
  /** Human-readable name for errors, e.g. `ZooKeeper server` or `ensemble member 2`. */
  readonly label: string;
  readonly java: string;
  readonly classpath: readonly string[];
  readonly jvmArgs: readonly string[];
  readonly mainClass: string;
  readonly args: readonly string[];
  readonly cwd: string;
  /** stdout and stderr are appended here. */
  readonly logFile: string;
}

/** How a JVM ended: an exit code, or the signal that killed it. */
export interface JvmExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

// After SIGKILL the kernel tears a JVM down in milliseconds; this bound only guards against a
// wedged kernel or a lost exit event.
const KILL_WAIT_MS = 5_000;
const LOG_TAIL_BYTES = 8_192;
const LOG_TAIL_LINES = 40;
const LOG_SEARCH_BYTES = 4 * 1024 * 1024;

/**
 * One JVM started by the harness: marked with the owner pid, registered with the watchdog,
 * logging to a file, and never keeping the Node.js process alive on its own.
 */
export class JvmProcess {
  readonly pid: number;
  /** Settles when the JVM has exited and been reaped. Never rejects. */
  readonly exited: Promise<JvmExit>;
  readonly #label: string;
  readonly #logFile: string;
  readonly #logOffset: number;
  #exit: JvmExit | undefined;

  private constructor(spec: JvmLaunchSpec, pid: number, exited: Promise<JvmExit>, logOffset: number) {
    this.#label = spec.label;
    this.#logFile = spec.logFile;
    this.#logOffset = logOffset;
    this.pid = pid;
    this.exited = exited.then((exit) => {
      this.#exit = exit;
      return exit;
    });
  }

  /** Starts the JVM; returns once it has a pid (not once it is ready). */
  static launch(spec: JvmLaunchSpec): JvmProcess {
    appendFileSync(spec.logFile, `==== zklock: starting ${spec.label} at ${new Date().toISOString()}\n`);
    const log = openSync(spec.logFile, 'a');
    const logOffset = fstatSync(log).size;
    // The owner marker goes first so it is visible even in truncated `ps` output.
    const args = [OWNER_MARKER, ...spec.jvmArgs, '-cp', spec.classpath.join(delimiter), spec.mainClass, ...spec.args];
    try {
      // The log file, not a pipe to us, is the JVM's stdout/stderr: it must survive our death
      // without SIGPIPE and must never block on a full pipe nobody reads.
      const child = spawn(spec.java, args, { cwd: spec.cwd, stdio: ['ignore', log, log] });
      // Spawn failures (e.g. ENOENT) arrive as an 'error' event after pid came back undefined.
      child.on('error', () => undefined);
      const pid = child.pid;
      if (pid === undefined) {
        throw new HarnessError('SPAWN_FAILED', `Could not start ${spec.label} with ${spec.java}`, {
          command: spec.java,
          cause: 'spawn returned no pid',
        });
      }
      watchPid(pid);
      child.unref();
      const exited = new Promise<JvmExit>((resolve) => {
        child.once('exit', (code, signal) => {
          unwatchPid(pid);
          resolve({ code, signal });
        });
      });
      return new JvmProcess(spec, pid, exited, logOffset);
    } finally {
      closeSync(log);
    }
  }

  /** The exit status, once the JVM has exited. */
  get exit(): JvmExit | undefined {
    return this.#exit;
  }

  get logFile(): string {
    return this.#logFile;
  }

  /** Sends `signal` unless the JVM is already gone. */
  signal(signal: NodeJS.Signals): void {
    if (this.#exit !== undefined) return;
    try {
      process.kill(this.pid, signal);
    } catch (error) {
      // ESRCH: it exited between our check and the kill; the exit event is on its way.
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  }

  /** SIGTERM (after SIGCONT, in case it is paused); SIGKILL if it is still alive after `graceMs`. */
  async terminate(graceMs: number): Promise<JvmExit> {
    if (this.#exit !== undefined) return this.#exit;
    // A stopped process keeps SIGTERM pending until continued.
    this.signal('SIGCONT');
    this.signal('SIGTERM');
    return (await fulfilsWithin(this.exited, graceMs)) ? this.exited : this.kill();
  }

  /** SIGKILL, then wait (bounded) until the JVM is reaped. */
  async kill(): Promise<JvmExit> {
    this.signal('SIGKILL');
    return withTimeout(
      this.exited,
      KILL_WAIT_MS,
      () =>
        new HarnessError('STOP_TIMEOUT', `${this.#label} (pid ${this.pid}) survived SIGKILL for ${KILL_WAIT_MS} ms`, {
          label: this.#label,
          pid: this.pid,
          timeoutMs: KILL_WAIT_MS,
        }),
    );
  }

  /**
   * The first line of this run's log (not earlier runs' in the same file) that contains `text`,
   * if any: a cause logged early, such as a bind failure, can be followed by more lines than
   * {@link logTail} keeps (a member retries its election port and logs each status probe).
   * Reads at most the run's last LOG_SEARCH_BYTES.
   */
  logLineWith(text: string): string | undefined {
    return this.#readLog(LOG_SEARCH_BYTES)
      .split('\n')
      .find((line) => line.includes(text));
  }

  /** The last lines this JVM wrote to its log (only this run, not earlier runs in the same file). */
  logTail(): string {
    return this.#readLog(LOG_TAIL_BYTES).split('\n').slice(-LOG_TAIL_LINES).join('\n');
  }

  /** The last `maxBytes` of this run's log. */
  #readLog(maxBytes: number): string {
    const log = openSync(this.#logFile, 'r');
    try {
      const size = fstatSync(log).size;
      const start = Math.max(this.#logOffset, size - maxBytes);
      const buffer = Buffer.alloc(Math.max(0, size - start));
      readSync(log, buffer, 0, buffer.length, start);
      return buffer.toString('utf8');
    } finally {
      closeSync(log);
    }
  }
}
