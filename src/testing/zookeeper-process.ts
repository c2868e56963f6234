import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pollUntil } from './bounded-wait.js';
import { fourLetterWord, parseServerStatus } from './four-letter-word.js';
import type { FourLetterWordOptions, ServerStatus } from './four-letter-word.js';
import { HarnessError } from './harness-error.js';
import { JvmProcess } from './jvm-process.js';
import type { JvmExit } from './jvm-process.js';
import { acceptsConnections, LOOPBACK } from './loopback-ports.js';
import { processState } from './process-status.js';
import { dataDirIn } from './zookeeper-config.js';
import type { Workspace } from './workspace.js';

/**
 * `stopped`: no JVM (never started, stopped, killed or crashed). `starting`/`stopping`: an
 * operation is in progress. `running`: the JVM is up (and was serving when `start()` returned).
 * `paused`: SIGSTOPped. `closed`: released for good.
 */
export type ZooKeeperProcessState = 'stopped' | 'starting' | 'running' | 'paused' | 'stopping' | 'closed';

/** What one ZooKeeper JVM needs to (re)start; prepared by its server or ensemble. */
export interface LaunchPlan {
  readonly workspace: Workspace;
  /** This process's own directory: zoo.cfg, data/, zookeeper.log. */
  readonly dir: string;
  /** Files to (re)write before every start, relative to `dir`. Must include `zoo.cfg`. */
  readonly files: Readonly<Record<string, string>>;
  /**
   * Write the files before the first start only: a reconfigurable member rewrites its zoo.cfg and
   * dynamic config itself on every reconfiguration, and a restart must read what it wrote.
   */
  readonly writeOnce?: boolean;
  readonly clientPort: number;
  readonly securePort: number | undefined;
}

/** Options for the harness's bounded waits on servers and ensembles. */
export interface WaitOptions {
  /** Bound for the wait. Defaults to the server's `startTimeoutMs`. */
  readonly timeoutMs?: number;
}

const MAIN_CLASS = 'org.apache.zookeeper.server.quorum.QuorumPeerMain';
const CONFIG_FILE = 'zoo.cfg';
const LOG_FILE = 'zookeeper.log';
const PROBE_TIMEOUT_MS = 1_000;
const PROBE_INTERVAL_MS = 100;
const SIGNAL_SETTLE_TIMEOUT_MS = 5_000;
const SIGNAL_SETTLE_INTERVAL_MS = 10;
const SERVING_MODES: ReadonlySet<string> = new Set(['standalone', 'leader', 'follower', 'observer']);

/** The log line that shows a port was taken, if any. */
function portConflictIn(jvm: JvmProcess): string | undefined {
  return jvm.logLineWith('Address already in use');
}

/**
 * One ZooKeeper JVM with its lifecycle controls. Shared by {@link ZooKeeperServer} and
 * {@link EnsembleMember}; they decide what to run, this class runs it.
 */
export abstract class ZooKeeperProcess {
  readonly #label: string;
  #jvm: JvmProcess | undefined;
  #transition: 'starting' | 'stopping' | undefined;
  #paused = false;

  protected constructor(label: string) {
    this.#label = label;
  }

  /** The plan for the next start; undefined until the owner has prepared one. */
  protected abstract launchPlan(): LaunchPlan | undefined;

  /** True once the owner has released this process for good (its directory is gone). */
  protected abstract isClosed(): boolean;

  /** Where this process is in its lifecycle. */
  get state(): ZooKeeperProcessState {
    if (this.isClosed()) return 'closed';
    if (this.#transition !== undefined) return this.#transition;
    if (this.#jvm === undefined || this.#jvm.exit !== undefined) return 'stopped';
    return this.#paused ? 'paused' : 'running';
  }

  /** Pid of the current JVM, or undefined when none is running. */
  get pid(): number | undefined {
    return this.#jvm?.exit === undefined ? this.#jvm?.pid : undefined;
  }

  /** The plain client port on 127.0.0.1. Stays the same across restarts. */
  get port(): number {
    return this.#plan('port').clientPort;
  }

  /** `127.0.0.1:<port>`. */
  get connectString(): string {
    return `${LOOPBACK}:${this.port}`;
  }

  /** The TLS client port on 127.0.0.1; undefined unless started with `tls: true`. */
  get securePort(): number | undefined {
    return this.#plan('securePort').securePort;
  }

  /** `127.0.0.1:<securePort>`; undefined unless started with `tls: true`. */
  get secureConnectString(): string | undefined {
    const port = this.securePort;
    return port === undefined ? undefined : `${LOOPBACK}:${port}`;
  }

  /** This process's directory (zoo.cfg, data/, zookeeper.log). */
  get directory(): string {
    return this.#plan('directory').dir;
  }

  /** The server log (stdout and stderr of every run, appended). */
  get logFile(): string {
    return join(this.directory, LOG_FILE);
  }

  #plan(operation: string): LaunchPlan {
    const plan = this.launchPlan();
    if (plan === undefined) throw this.#invalidState(operation);
    return plan;
  }

  #invalidState(operation: string): HarnessError {
    return new HarnessError('INVALID_STATE', `Cannot ${operation}: ${this.#label} is ${this.state}`, {
      operation,
      state: this.state,
    });
  }

  /**
   * Starts the JVM with the same ports and data as before and waits (bounded by
   * `startTimeoutMs`) until it serves: `srvr` reports standalone/leader/follower/observer and,
   * with TLS, the secure port accepts connections. On failure the JVM is killed and the error
   * (`START_TIMEOUT`, `PROCESS_EXITED`, `PORT_UNAVAILABLE`) carries the tail of its log.
   */
  async start(): Promise<void> {
    if (this.state !== 'stopped') throw this.#invalidState('start');
    const plan = this.#plan('start');
    // Everything up to the launch is synchronous, so a kill() racing with start() always finds the JVM.
    for (const [file, content] of Object.entries(plan.files)) {
      const path = join(plan.dir, file);
      if (plan.writeOnce === true && existsSync(path)) continue;
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, content);
    }
    const { installation, jvmArgs, timing } = plan.workspace;
    const jvm = JvmProcess.launch({
      label: this.#label,
      java: installation.java.executable,
      classpath: installation.classpath,
      jvmArgs,
      mainClass: MAIN_CLASS,
      args: [join(plan.dir, CONFIG_FILE)],
      cwd: plan.dir,
      logFile: join(plan.dir, LOG_FILE),
    });
    this.#jvm = jvm;
    this.#paused = false;
    this.#transition = 'starting';
    try {
      await this.#waitUntilServing(jvm, plan, timing.startTimeoutMs);
    } catch (error) {
      // The original failure matters more than a (very unlikely) failure to kill.
      await jvm.kill().catch(() => undefined);
      throw error;
    } finally {
      this.#transition = undefined;
    }
  }

  /** Graceful stop: SIGTERM, then SIGKILL after `stopTimeoutMs`. Resolves once the JVM is gone. No-op when not running. */
  async stop(): Promise<void> {
    await this.#end((jvm, plan) => jvm.terminate(plan.workspace.timing.stopTimeoutMs));
  }

  /** SIGKILL: an abrupt crash, no goodbye to clients or peers. Resolves once the JVM is gone. No-op when not running. */
  async kill(): Promise<void> {
    await this.#end((jvm) => jvm.kill());
  }

  async #end(how: (jvm: JvmProcess, plan: LaunchPlan) => Promise<JvmExit>): Promise<void> {
    const jvm = this.#jvm;
    const plan = this.launchPlan();
    if (jvm === undefined || jvm.exit !== undefined || plan === undefined) return;
    this.#transition = 'stopping';
    try {
      await how(jvm, plan);
    } finally {
      this.#paused = false;
      this.#transition = undefined;
    }
  }

  /** `stop()` (if running) then `start()`: same port, same data directory. */
  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /**
   * SIGSTOP: the JVM freezes with all its sockets open — clients see a silent server, peers a
   * hung one. Resolves once the kernel reports the process stopped.
   */
  async pause(): Promise<void> {
    const jvm = this.#jvm;
    if (this.state !== 'running' || jvm === undefined) throw this.#invalidState('pause');
    jvm.signal('SIGSTOP');
    this.#paused = true;
    await this.#waitForSignalEffect(jvm, 'pause', (state) => state.startsWith('T'));
  }

  /** SIGCONT after {@link pause}. Resolves once the process runs again (not necessarily serving yet; see {@link waitUntilServing}). */
  async resume(): Promise<void> {
    const jvm = this.#jvm;
    if (this.state !== 'paused' || jvm === undefined) throw this.#invalidState('resume');
    jvm.signal('SIGCONT');
    this.#paused = false;
    await this.#waitForSignalEffect(jvm, 'resume', (state) => !state.startsWith('T'));
  }

  async #waitForSignalEffect(jvm: JvmProcess, operation: string, done: (state: string) => boolean): Promise<void> {
    await pollUntil(
      async () => {
        const state = await processState(jvm.pid);
        return state === undefined || done(state) ? true : undefined;
      },
      {
        timeoutMs: SIGNAL_SETTLE_TIMEOUT_MS,
        intervalMs: SIGNAL_SETTLE_INTERVAL_MS,
        onTimeout: () =>
          new HarnessError('WAIT_TIMEOUT', `${this.#label} did not ${operation} within ${SIGNAL_SETTLE_TIMEOUT_MS} ms`, {
            what: operation,
            timeoutMs: SIGNAL_SETTLE_TIMEOUT_MS,
          }),
      },
    );
  }

  /** Sends a four-letter word (`ruok`, `srvr`, `mntr`, ...) to the plain client port; see {@link fourLetterWord}. */
  fourLetterWord(word: string, options?: FourLetterWordOptions): Promise<string> {
    return fourLetterWord(this.port, word, options);
  }

  /** One `srvr` round trip: the status, or undefined when the server answers but does not serve. */
  async status(options?: FourLetterWordOptions): Promise<ServerStatus | undefined> {
    return parseServerStatus(await this.fourLetterWord('srvr', options));
  }

  /** Waits (bounded) until the running JVM serves, e.g. after {@link resume}. */
  async waitUntilServing(options: WaitOptions = {}): Promise<ServerStatus> {
    const jvm = this.#jvm;
    const plan = this.launchPlan();
    if (jvm === undefined || jvm.exit !== undefined || plan === undefined) throw this.#invalidState('wait until serving');
    return this.#waitUntilServing(jvm, plan, options.timeoutMs ?? plan.workspace.timing.startTimeoutMs);
  }

  async #waitUntilServing(jvm: JvmProcess, plan: LaunchPlan, timeoutMs: number): Promise<ServerStatus> {
    return pollUntil(
      async () => {
        const status = parseServerStatus(await fourLetterWord(plan.clientPort, 'srvr', { timeoutMs: PROBE_TIMEOUT_MS }));
        if (status === undefined || !SERVING_MODES.has(status.mode)) return undefined;
        // Another ZooKeeper on the port answers too, until our JVM fails to bind it and exits
        // (read as PORT_UNAVAILABLE): only ours names our data directory.
        if (!(await fourLetterWord(plan.clientPort, 'conf', { timeoutMs: PROBE_TIMEOUT_MS })).includes(`dataDir=${dataDirIn(plan.dir)}/`)) return undefined;
        if (plan.securePort !== undefined && !(await acceptsConnections(plan.securePort, PROBE_TIMEOUT_MS))) return undefined;
        return status;
      },
      {
        timeoutMs,
        intervalMs: PROBE_INTERVAL_MS,
        onTimeout: () => this.#timeoutError(jvm, timeoutMs, plan),
        abort: { when: jvm.exited, error: (exit) => this.#exitError(jvm, exit, plan) },
      },
    );
  }

  #exitError(jvm: JvmProcess, exit: JvmExit, plan: LaunchPlan): HarnessError {
    const logTail = jvm.logTail();
    const logFile = jvm.logFile;
    const conflict = portConflictIn(jvm);
    if (conflict !== undefined) return this.#portConflictError(plan, logFile, logTail, conflict);
    const how = exit.signal !== null ? `signal ${exit.signal}` : `exit code ${exit.code}`;
    return new HarnessError('PROCESS_EXITED', `${this.#label} exited before serving (${how}). Log tail:\n${logTail}`, {
      label: this.#label,
      exitCode: exit.code,
      signal: exit.signal,
      logFile,
      logTail,
    });
  }

  #timeoutError(jvm: JvmProcess, timeoutMs: number, plan: LaunchPlan): HarnessError {
    const logTail = jvm.logTail();
    const logFile = jvm.logFile;
    const conflict = portConflictIn(jvm);
    if (conflict !== undefined) return this.#portConflictError(plan, logFile, logTail, conflict);
    return new HarnessError('START_TIMEOUT', `${this.#label} did not serve within ${timeoutMs} ms. Log tail:\n${logTail}`, {
      label: this.#label,
      timeoutMs,
      logFile,
      logTail,
    });
  }

  #portConflictError(plan: LaunchPlan, logFile: string, logTail: string, conflict: string): HarnessError {
    // The conflict's own line, which the tail may no longer hold.
    return new HarnessError('PORT_UNAVAILABLE', `${this.#label}: a port was taken by another process (${conflict.trim()}). Log tail:\n${logTail}`, {
      port: plan.clientPort,
      logFile,
      logTail,
    });
  }
}
