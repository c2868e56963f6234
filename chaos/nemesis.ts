import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FaultProxy, ZooKeeperEnsemble } from '../src/testing/index.js';
import type { FaultKind, FaultRecord } from './history.js';
import { preciseNow } from './history.js';
import type { Prng } from './prng.js';

/** A worker process as the nemesis sees it: something to pause, and its own proxies to cut. */
export interface WorkerTarget {
  name: string;
  child: ChildProcess;
  /** One per ensemble member: the worker reaches the ensemble only through these. */
  proxies: readonly FaultProxy[];
}

export interface NemesisOptions {
  ensemble: ZooKeeperEnsemble;
  workers: readonly WorkerTarget[];
  prng: Prng;
  sessionTimeout: number;
  /** No fault starts after this time (epoch ms). */
  until: number;
  signal: AbortSignal;
  log: (line: string) => void;
  /** Whether a worker process is in the middle of an exclusive operation (asked by the resource). */
  busyExclusive: (process: string) => boolean;
}

const QUORUM_TIMEOUT_MS = 30_000;
/** How long a pause waits for its worker to be mid-operation before pausing it anyway. */
const CATCH_HOLDER_MS = 3_000;
const KINDS: readonly FaultKind[] = ['kill-member', 'kill-leader', 'restart-ensemble', 'pause-worker', 'cut-worker', 'blackhole-worker', 'expire-session'];

/**
 * Injects one fault at a time, at seeded intervals, until `until`; every fault is healed before
 * the next one starts, so the checker can measure recovery from each on its own.
 */
export async function runNemesis(options: NemesisOptions): Promise<FaultRecord[]> {
  const faults: FaultRecord[] = [];
  const { prng, signal } = options;
  for (;;) {
    const gap = prng.between(2 * options.sessionTimeout, 3 * options.sessionTimeout);
    if (Date.now() + gap >= options.until || signal.aborted) break;
    await sleep(gap, undefined, { signal }).catch(() => undefined);
    if (signal.aborted) break;
    const kind = prng.pick(KINDS);
    const start = preciseNow();
    const fault: FaultRecord = { kind, target: '?', start, end: start };
    try {
      fault.target = await inject(kind, options);
    } catch (error) {
      // A harness failure (a member that would not come back) is a finding, not a reason to stop the run.
      fault.error = String(error);
    }
    fault.end = preciseNow();
    faults.push(fault);
    options.log(`fault ${kind} on ${fault.target}: ${((fault.end - fault.start) / 1000).toFixed(1)} s${fault.error ? ` FAILED: ${fault.error}` : ''}`);
  }
  return faults;
}

/** Injects and heals one fault; returns what it hit. */
async function inject(kind: FaultKind, options: NemesisOptions): Promise<string> {
  const { ensemble, prng, sessionTimeout } = options;
  switch (kind) {
    case 'kill-member':
    case 'kill-leader': {
      const member = kind === 'kill-leader' ? await ensemble.leader({ timeoutMs: QUORUM_TIMEOUT_MS }) : prng.pick(ensemble.members);
      await member.kill();
      await sleep(prng.between(500, 3000));
      await member.restart();
      await ensemble.waitForQuorum({ timeoutMs: QUORUM_TIMEOUT_MS });
      return `member ${member.id}`;
    }
    case 'restart-ensemble': {
      await Promise.all(ensemble.members.map((m) => m.kill()));
      await sleep(prng.between(500, 2000));
      await Promise.all(ensemble.members.map((m) => m.restart()));
      await ensemble.waitForQuorum({ timeoutMs: QUORUM_TIMEOUT_MS });
      return 'all members';
    }
    case 'pause-worker': {
      // Longer than the session timeout: the server expires the session while the process sleeps.
      // Caught mid-operation, it is the stale holder the fence must stop when it wakes up.
      const worker = prng.pick(options.workers);
      const deadline = Date.now() + CATCH_HOLDER_MS;
      while (!options.busyExclusive(worker.name) && Date.now() < deadline) await sleep(5);
      worker.child.kill('SIGSTOP');
      await sleep(prng.between(1.5, 2) * sessionTimeout);
      worker.child.kill('SIGCONT');
      return worker.name;
    }
    case 'cut-worker': {
      const worker = prng.pick(options.workers);
      for (const proxy of worker.proxies) proxy.resetAll();
      return worker.name;
    }
    case 'blackhole-worker':
    case 'expire-session': {
      // A short black hole the session survives, or one long enough that the server expires it
      // (ZooKeeper has no command to expire a session, and the client keeps its password private).
      const worker = prng.pick(options.workers);
      const factor = kind === 'expire-session' ? prng.between(1.5, 2) : prng.between(0.3, 0.5);
      for (const proxy of worker.proxies) proxy.blackhole();
      await sleep(factor * sessionTimeout);
      // Bytes were dropped mid-stream: reset, so the client reconnects on a clean connection.
      for (const proxy of worker.proxies) {
        proxy.passThrough();
        proxy.resetAll();
      }
      return worker.name;
    }
  }
}
