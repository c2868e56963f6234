import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import type { WriteStream } from 'node:fs';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { ZooKeeperEnsemble } from '../src/testing/index.js';
import { FaultProxy } from '../src/testing/index.js';
import type { Language } from './history.js';
import type { WorkerTarget } from './nemesis.js';
import { pollUntil } from './poll-until.js';
import type { ContenderProcess } from './contender-process.js';
import type { PeerLanguage } from './peers/peer-process.js';
import { PeerProcess } from './peers/peer-process.js';
import type { RunnerMessage, WorkerConfig, WorkerMessage, WorkerStats } from './worker.js';

const WORKER = fileURLToPath(new URL('./worker.ts', import.meta.url));
const STOP_TIMEOUT_MS = 30_000;
const EXIT_TIMEOUT_MS = 15_000;
const POLL_MS = 100;

interface PoolOptions {
  ensemble: ZooKeeperEnsemble;
  /** zklock worker processes. */
  count: number;
  /** One Curator or kazoo worker process per entry, on the same lock paths. */
  peers: readonly PeerLanguage[];
  seed: number;
  resourceUrl: string;
  sessionTimeout: number;
  /**
   * Members to pin workers to (the followers at the start): the second half of the zklock
   * workers each reach only one of them, so their sessions live on a follower on purpose.
   */
  pinTo: readonly number[];
  /** Worker stderr goes here. */
  logFile: string;
}

/** A zklock worker process (chaos/worker.ts), driven over its IPC channel. */
class WorkerProcess implements ContenderProcess {
  idle = false;
  stats: WorkerStats | undefined;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    child.on('message', (message: WorkerMessage) => {
      if (message.type === 'idle') this.idle = true;
      else this.stats = message.stats;
    });
  }

  send(message: RunnerMessage): void {
    if (this.child.connected) this.child.send(message);
  }
}

/** A contender process with the proxies it reaches the ensemble through: what the nemesis targets. */
export class Contender implements WorkerTarget {
  constructor(
    readonly process: ContenderProcess,
    readonly language: Language,
    readonly proxies: readonly FaultProxy[],
    readonly pinnedTo: number | undefined,
    /** Logical workers on its one session. */
    readonly logicalWorkers: number,
  ) {}

  get name(): string {
    return this.process.name;
  }

  get child(): ChildProcess {
    return this.process.child;
  }

  get exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }
}

/** The contender processes, each reaching the ensemble through FaultProxies of its own. */
export class WorkerPool implements AsyncDisposable {
  private constructor(
    readonly workers: Contender[],
    private readonly log: WriteStream,
  ) {}

  static async start(options: PoolOptions): Promise<WorkerPool> {
    const log = createWriteStream(options.logFile);
    await once(log, 'open');
    const pool = new WorkerPool([], log);
    try {
      for (let i = 0; i < options.count; i++) {
        const pinnedTo = i >= Math.ceil(options.count / 2) ? options.pinTo[i % options.pinTo.length] : undefined;
        const proxies = await proxiesTo(options.ensemble, pinnedTo);
        const config: WorkerConfig = {
          name: `w${i + 1}`,
          connect: connectString(proxies),
          // Every other process runs two logical workers on one client: they share a session.
          logicalWorkers: i % 2 === 0 ? 1 : 2,
          seed: options.seed * 1000 + i,
          resourceUrl: options.resourceUrl,
          sessionTimeout: options.sessionTimeout,
        };
        const child = spawn(process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(config)], { stdio: ['ignore', 'ignore', log, 'ipc'] });
        pool.workers.push(new Contender(new WorkerProcess(config.name, child), 'zklock', proxies, pinnedTo, config.logicalWorkers));
      }
      for (const [i, language] of options.peers.entries()) {
        const proxies = await proxiesTo(options.ensemble, undefined);
        const peer = await PeerProcess.start({
          language,
          name: `${language}${options.peers.slice(0, i + 1).filter((l) => l === language).length}`,
          connect: connectString(proxies),
          seed: options.seed * 1000 + 500 + i,
          resourceUrl: options.resourceUrl,
          sessionTimeout: options.sessionTimeout,
          log,
        });
        pool.workers.push(new Contender(peer, language, proxies, undefined, 1));
      }
    } catch (error) {
      await pool[Symbol.asyncDispose]();
      throw error;
    }
    return pool;
  }

  get logicalWorkers(): number {
    return this.workers.reduce((sum, w) => sum + w.logicalWorkers, 0);
  }

  /** Asks every worker to finish its loops and release everything; resolves when all say so (bounded). */
  async stop(): Promise<void> {
    for (const worker of this.workers) {
      // A worker the nemesis left stopped must run to answer.
      worker.child.kill('SIGCONT');
      worker.proxies.forEach((p) => p.passThrough());
      worker.process.send({ type: 'stop' });
    }
    await pollUntil(() => this.workers.every((w) => w.process.idle || w.exited), STOP_TIMEOUT_MS, POLL_MS);
  }

  /** Closes every worker's client and waits for its exit (bounded; SIGKILL after that). */
  async close(): Promise<WorkerStats[]> {
    for (const worker of this.workers) worker.process.send({ type: 'close' });
    await pollUntil(() => this.workers.every((w) => w.exited), EXIT_TIMEOUT_MS, POLL_MS);
    return this.workers.map((w) => w.process.stats ?? { name: w.name, acquisitions: 0, acquireErrors: { NO_STATS: 1 } });
  }

  /**
   * SIGKILLs every worker still running, synchronously: for the runner's exit and signal handlers,
   * where nothing async runs. A worker left SIGSTOPped would otherwise never notice its parent died.
   */
  killAll(): void {
    for (const worker of this.workers) if (!worker.exited) worker.child.kill('SIGKILL');
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.killAll();
    for (const worker of this.workers) for (const proxy of worker.proxies) await proxy.close();
    this.log.end();
  }
}

/** A proxy per member the contender may use: every member, or only the one it is pinned to. */
async function proxiesTo(ensemble: ZooKeeperEnsemble, pinnedTo: number | undefined): Promise<FaultProxy[]> {
  const proxies: FaultProxy[] = [];
  for (const member of ensemble.members) {
    if (pinnedTo === undefined || member.id === pinnedTo) proxies.push(await FaultProxy.start({ targetPort: member.port }));
  }
  return proxies;
}

function connectString(proxies: readonly FaultProxy[]): string {
  return proxies.map((p) => p.connectString).join(',');
}
