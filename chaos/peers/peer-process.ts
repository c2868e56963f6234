import type { ChildProcessByStdio } from 'node:child_process';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import type { WriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { Language } from '../history.js';
import type { ContenderProcess } from '../contender-process.js';
import type { RunnerMessage, WorkerMessage, WorkerStats } from '../worker.js';
import { LIGHT_JVM_OPTIONS, curatorProgram } from './java.js';

/** A contender on another library, on the same lock paths as zklock's workers. */
export type PeerLanguage = Exclude<Language, 'zklock'>;

/** The peer's one argument (JSON); the worker is `${name}.1`. */
export interface PeerConfig {
  name: string;
  connect: string;
  seed: number;
  resourceUrl: string;
  sessionTimeout: number;
}

export interface PeerOptions extends PeerConfig {
  language: PeerLanguage;
  /** The peer's stderr goes here; it must be open (it is handed to the child as a file descriptor). */
  log: WriteStream;
}

/** How a peer ended: an exit code, or the signal that killed it. */
export interface PeerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const CURATOR_SOURCE = fileURLToPath(new URL('./CuratorWorker.java', import.meta.url));
const KAZOO_SCRIPT = fileURLToPath(new URL('./kazoo_worker.py', import.meta.url));
/** Debian's python3-kazoo lives in the system interpreter, not in a pyenv one that may come first on PATH. */
const PYTHON = '/usr/bin/python3';

/**
 * A Curator or kazoo worker process (chaos/peers/CuratorWorker.java, kazoo_worker.py): it speaks
 * to the runner in lines, `stop`/`close` on its stdin and JSON messages on its stdout, and ends
 * when its stdin closes, so it cannot outlive the runner.
 */
export class PeerProcess implements ContenderProcess {
  idle = false;
  stats: WorkerStats | undefined;
  /** Settles once the peer has exited and its stdout is read (so `stats` is final). Never rejects. */
  readonly exited: Promise<PeerExit>;

  private constructor(
    readonly name: string,
    readonly language: PeerLanguage,
    readonly child: ChildProcessByStdio<Writable, Readable, null>,
    log: WriteStream,
  ) {
    // A peer that has exited closes the pipe; a message to it then has no one to act on it.
    child.stdin.on('error', () => undefined);
    createInterface({ input: child.stdout }).on('line', (line) => {
      const message = parse(line);
      if (message?.type === 'idle') this.idle = true;
      else if (message?.type === 'stats') this.stats = message.stats;
      else log.write(`[${name} ${language}] unexpected stdout line: ${line}\n`);
    });
    this.exited = new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  }

  /** Starts a peer (compiling the Curator worker first when its class files are stale); resolves once it is spawned. */
  static async start(options: PeerOptions): Promise<PeerProcess> {
    const { language, log, ...config } = options;
    const { file, args } = language === 'curator' ? await curatorProgram(CURATOR_SOURCE, LIGHT_JVM_OPTIONS) : kazooCommand();
    const child = spawn(file, [...args, JSON.stringify(config)], { stdio: ['pipe', 'pipe', log] });
    await once(child, 'spawn');
    return new PeerProcess(config.name, language, child, log);
  }

  /** Whether it has not exited yet. */
  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  send(message: RunnerMessage): void {
    if (this.child.stdin.writable) this.child.stdin.write(`${message.type}\n`);
  }
}

interface Command {
  file: string;
  args: string[];
}

function kazooCommand(): Command {
  if (!existsSync(PYTHON)) throw new Error(`the kazoo peer needs ${PYTHON} with python3-kazoo (bash scripts/install-system-deps.sh installs it)`);
  return { file: PYTHON, args: [KAZOO_SCRIPT] };
}

function parse(line: string): WorkerMessage | undefined {
  try {
    return JSON.parse(line) as WorkerMessage;
  } catch {
    return undefined;
  }
}
