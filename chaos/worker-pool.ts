import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { WriteStream } from 'node:fs';
import { createWriteStream } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ZooKeeperEnsemble } from '../src/testing/index.js';
import { FaultProxy } from '../src/testing/index.js';
import type { WorkerTarget } from './nemesis.js';
import type { RunnerMessage, WorkerConfig, WorkerMessage, WorkerStats } from './worker.js';

const WORKER = fileURLToPath(new URL('./worker.ts', import.meta.url));
const STOP_TIMEOUT_MS = 30_000;
const EXIT_TIMEOUT_MS = 15_000;

interface PoolOptions {
  ensemble: ZooKeeperEnsemble;
  count: number;
  seed: number;
  resourceUrl: string;
  sessionTimeout: number;
  /**
   * Members to pin workers to (the followers at the start): the second half of the workers each
   * reach only one of them, so their sessions live on a follower on purpose.
   */
  pinTo: readonly number[];
  /** Worker stderr goes here. */
  logFile: string;
}

class WorkerProcess implements WorkerTarget {
  idle = false;
  stats: WorkerStats | undefined;

  constructor(
    readonly config: WorkerConfig,
    readonly child: ChildProcess,
    readonly proxies: readonly FaultProxy[],
    readonly pinnedTo: number | undefined,
  ) {
    child.on('message', (message: WorkerMessage) => {
      if (message.type === 'idle') this.idle = true;
      else this.stats = message.stats;
    });
  }

  get name(): string {
    return this.config.name;
  }

  send(message: RunnerMessage): void {
    if (this.child.connected) this.child.send(message);
  }
}

/** The worker processes, each reaching every ensemble member through a FaultProxy of its own. */
export class WorkerPool implements AsyncDisposable {
  private constructor(
    readonly workers: readonly WorkerProcess[],
    private readonly log: WriteStream,
  ) {}

  static async start(options: PoolOptions): Promise<WorkerPool> {
    const log = createWriteStream(options.logFile);
    await once(log, 'open');
    const workers: WorkerProcess[] = [];
    const pool = new WorkerPool(workers, log);
    try {
      for (let i = 0; i < options.count; i++) {
        const pinnedTo = i >= Math.ceil(options.count / 2) ? options.pinTo[i % options.pinTo.length] : undefined;
        const members = options.ensemble.members.filter((member) => pinnedTo === undefined || member.id === pinnedTo);
        const proxies: FaultProxy[] = [];
        for (const member of members) proxies.push(await FaultProxy.start({ targetPort: member.port }));
        const config: WorkerConfig = {
          name: `w${i + 1}`,
          connect: proxies.map((p) => p.connectString).join(','),
          // Every other process runs two logical workers on one client: they share a session.
          logicalWorkers: i % 2 === 0 ? 1 : 2,
          seed: options.seed * 1000 + i,
          resourceUrl: options.resourceUrl,
          sessionTimeout: options.sessionTimeout,
        };
        const child = spawn(process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(config)], { stdio: ['ignore', 'ignore', log, 'ipc'] });
        workers.push(new WorkerProcess(config, child, proxies, pinnedTo));
      }
    } catch (error) {
      await pool[Symbol.asyncDispose]();
      throw error;
    }
    return pool;
  }

  get logicalWorkers(): number {
    return this.workers.reduce((sum, w) => sum + w.config.logicalWorkers, 0);
  }

  /** Asks every worker to finish its loops and release everything; resolves when all say so (bounded). */
  async stop(): Promise<void> {
    for (const worker of this.workers) {
      // A worker the nemesis left stopped must run to answer.
      worker.child.kill('SIGCONT');
      worker.proxies.forEach((p) => p.passThrough());
      worker.send({ type: 'stop' });
    }
    await until(() => this.workers.every((w) => w.idle || w.child.exitCode !== null), STOP_TIMEOUT_MS);
  }

  /** Closes every worker's client and waits for its exit (bounded; SIGKILL after that). */
  async close(): Promise<WorkerStats[]> {
    for (const worker of this.workers) worker.send({ type: 'close' });
    await until(() => this.workers.every((w) => w.child.exitCode !== null || w.child.signalCode !== null), EXIT_TIMEOUT_MS);
    return this.workers.map((w) => w.stats ?? { name: w.name, acquisitions: 0, acquireErrors: { NO_STATS: 1 } });
  }

  /**
   * SIGKILLs every worker still running, synchronously: for the runner's exit and signal handlers,
   * where nothing async runs. A worker left SIGSTOPped would otherwise never notice its parent died.
   */
  killAll(): void {
    for (const worker of this.workers) {
      if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.killAll();
    for (const worker of this.workers) for (const proxy of worker.proxies) await proxy.close();
    this.log.end();
  }
}

async function until(done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done() && Date.now() < deadline) await sleep(100);
}
