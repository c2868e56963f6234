import { performance } from 'node:perf_hooks';
import type { ZooKeeperClient } from './zklock.js';
import { Mutex } from './zklock.js';
import type { Bench } from './context.js';
import type { HandoffSummary } from './lock-contention.js';
import { summarizeHandoffs } from './lock-contention.js';
import { sleep } from './measure.js';
import type { LockEvent } from './peers/peer-run.js';
import { connectZklock } from './peers/ops-client.js';
import { totalWatches } from './server-traffic.js';

export interface HerdResult {
  waiters: number;
  /** Watch events all waiters received, per release that had a waiter behind it (goal: at most 2: the waiter behind, and the one that follows it). */
  wakesPerRelease: number;
  handoff: HandoffSummary;
  /** The server's `Total watches` (wchs) once every waiter is queued. */
  serverWatches: number | undefined;
  /** From the first release to the last waiter's release. */
  drainMs: number;
}

const QUEUE_BOUND_MS = 120_000;

/**
 * `sessions × waitersPerSession` waiters queue on one Mutex behind a holder; then the holder
 * releases and each waiter releases as soon as it acquires, so the lock is handed down the queue.
 */
export async function herd(bench: Bench, path: string, sessions: number, waitersPerSession: number): Promise<HerdResult> {
  const waiters = sessions * waitersPerSession;
  const holder = await connectZklock(bench.connectString);
  const clients = await Promise.all(Array.from({ length: sessions }, () => connectZklock(bench.connectString)));
  try {
    const first = await new Mutex(holder, path).acquire();
    let wakes = 0;
    const events: LockEvent[] = [[0, performance.now(), -1]];
    const done = Array.from({ length: waiters }, async (_, w) => {
      const mutex = new Mutex(clients[w % sessions]!, path, { onWake: () => wakes++ });
      const lease = await mutex.acquire();
      events.push([0, performance.now(), w]);
      events.push([1, performance.now(), w]);
      await lease.release();
    });
    await waitForQueue(holder, path, waiters + 1);
    const serverWatches = await waitForWatches(bench, waiters);
    const t0 = performance.now();
    events.push([1, t0, -1]);
    await first.release();
    await Promise.all(done);
    return { waiters, wakesPerRelease: wakes / waiters, handoff: summarizeHandoffs(events), serverWatches, drainMs: performance.now() - t0 };
  } finally {
    await Promise.all([holder, ...clients].map((c) => c.close()));
  }
}

async function waitForQueue(client: ZooKeeperClient, path: string, size: number): Promise<void> {
  const until = performance.now() + QUEUE_BOUND_MS;
  while ((await client.getChildren(path)).children.length < size) {
    if (performance.now() > until) throw new Error(`fewer than ${size} contenders queued on ${path} after ${QUEUE_BOUND_MS} ms`);
    await sleep(20);
  }
}

/** Waiters set their watch just after their node shows up in the queue: poll wchs until all are counted (or give up after a while and report what is there). */
async function waitForWatches(bench: Bench, atLeast: number): Promise<number | undefined> {
  let watches: number | undefined;
  for (let attempt = 0; attempt < 100; attempt++) {
    watches = totalWatches(await bench.fourLetterWord('wchs'));
    if (watches === undefined || watches >= atLeast) return watches;
    await sleep(50);
  }
  return watches;
}
