import { performance } from 'node:perf_hooks';
import type { Bench } from './context.js';
import type { Contended, NodeLockSession } from './lock-session.js';
import { measure, percentile, sleep } from './measure.js';
import type { Measurement } from './measure.js';
import type { LockEvent } from './peers/peer-run.js';
import type { ServerTraffic } from './server-traffic.js';
import { withTraffic } from './server-traffic.js';

export interface Contention {
  readonly m: Measurement;
  readonly perSession: readonly number[];
  readonly events: readonly LockEvent[];
  /** What the server counted over the timed loop (the sessions connect before it and close after). */
  readonly server: ServerTraffic;
  /** With `leases`: the most sessions that held one semaphore at once, counted by this loop (see {@link HolderCount}). */
  readonly maxHolders?: number;
}

export interface ContentionSpec {
  sessions: number;
  /** Session i uses lock i % locks. */
  locks: number;
  durationMs: number;
  /** With it, each acquisition is a read (with this chance) or a write of a ReadWriteLock. */
  readRatio?: number;
  /** With it, each lock is a Semaphore of this many leases, and the loop counts its holders. */
  leases?: number;
  /** With `leases`: how long each holder holds (ms). */
  holdMs?: number;
}

/**
 * The harness's own count of a semaphore's holders, independent of the recipe: a session enters
 * after its acquire resolves and leaves before it calls `release()`, holding `ms` in between, so
 * that the leases fill and an over-full semaphore would show. Peers do the same (Thread.sleep,
 * time.sleep).
 */
class HolderCount {
  private now = 0;
  most = 0;

  async hold(ms: number): Promise<void> {
    this.most = Math.max(this.most, ++this.now);
    // Node's timers count whole milliseconds of loop time and may fire early by a fraction of
    // one; the JVM and Python sleep at least as long as asked: top up to the full hold.
    const until = performance.now() + ms;
    while (performance.now() < until) await sleep(Math.max(1, until - performance.now()));
    this.now--;
  }
}

/** As CuratorBench.java's ACQUIRE_TIMEOUT_S and kazoo_bench.py's. */
const ACQUIRE_TIMEOUT_MS = 60_000;

/**
 * `sessions` sessions of a Node library (zklock, or nzk's textbook lock) in this process loop
 * acquire → release (no hold time; with `leases`, `holdMs` counted by the holder count) for the
 * duration, recording when each acquire resolves and each release is called, on one clock.
 */
export async function contendInProcess(
  bench: Bench,
  root: string,
  spec: ContentionSpec,
  open: (connectString: string) => Promise<NodeLockSession>,
  /** Runs the timed loop (its argument) with something around it: the profiler (profile.ts). */
  around: (loop: () => Promise<Measurement>) => Promise<Measurement> = (loop) => loop(),
): Promise<Contention> {
  const clients = await Promise.all(Array.from({ length: spec.sessions }, () => open(bench.connectString)));
  try {
    const holders = spec.leases === undefined ? undefined : Array.from({ length: spec.locks }, () => new HolderCount());
    const pickers = clients.map((client, i) => lockPicker(client, `${root}/lock-${i % spec.locks}`, spec));
    const perSession = clients.map(() => 0);
    const events: LockEvent[] = [];
    const { server, ...m } = await withTraffic(bench, () =>
      around(() => measure(0, async () => {
        const deadline = performance.now() + spec.durationMs;
        await Promise.all(
          pickers.map(async (pick, i) => {
            while (performance.now() < deadline) {
              // Bounded as the peers' sides are: a lock not had by then means the run is broken.
              const lease = await pick().acquire({ timeout: ACQUIRE_TIMEOUT_MS });
              events.push([0, performance.now(), i]);
              perSession[i]!++;
              if (holders) await holders[i % spec.locks]!.hold(spec.holdMs ?? 0);
              events.push([1, performance.now(), i]);
              await lease.release();
            }
          }),
        );
      })),
    );
    const maxHolders = holders && Math.max(...holders.map((h) => h.most));
    return { m: { ...m, ops: perSession.reduce((a, b) => a + b, 0) }, perSession, events, server, maxHolders };
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}

/** What a session acquires next: its Mutex, a side of its ReadWriteLock, or its Semaphore. */
function lockPicker(session: NodeLockSession, path: string, { readRatio, leases }: ContentionSpec): () => Contended {
  if (leases !== undefined) {
    if (!session.semaphore) throw new Error('this library has no semaphore');
    const semaphore = session.semaphore(path, leases);
    return () => semaphore;
  }
  if (readRatio === undefined) {
    const mutex = session.mutex(path);
    return () => mutex;
  }
  if (!session.readWrite) throw new Error('this library has no read/write lock');
  const rw = session.readWrite(path);
  return () => (Math.random() < readRatio ? rw.read : rw.write);
}

/**
 * Handoff times (ms) of an exclusive lock from its event log: for each acquisition, the time
 * since the previous holder called `release()` — so the release's own commit, the part a waiting
 * user feels, is inside it. Holders follow each other in the order their acquires resolved, and
 * a release belongs to the latest acquisition of the same worker.
 */
export function handoffs(events: readonly LockEvent[]): number[] {
  const sorted = [...events].sort((a, b) => a[1] - b[1]);
  const holds: { acquiredAt: number; releaseCalledAt?: number }[] = [];
  const current = new Map<number, { acquiredAt: number; releaseCalledAt?: number }>();
  for (const [kind, t, who] of sorted) {
    if (kind === 0) {
      const hold = { acquiredAt: t };
      holds.push(hold);
      current.set(who, hold);
    } else {
      const hold = current.get(who);
      if (hold) hold.releaseCalledAt = t;
    }
  }
  const times: number[] = [];
  for (let i = 1; i < holds.length; i++) {
    const releaseCalledAt = holds[i - 1]!.releaseCalledAt;
    if (releaseCalledAt !== undefined) times.push(holds[i]!.acquiredAt - releaseCalledAt);
  }
  return times;
}

export interface HandoffSummary {
  p50: number;
  p99: number;
  count: number;
}

export function summarizeHandoffs(events: readonly LockEvent[]): HandoffSummary {
  const times = handoffs(events);
  return { p50: percentile(times, 50), p99: percentile(times, 99), count: times.length };
}
