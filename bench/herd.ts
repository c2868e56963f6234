import { performance } from 'node:perf_hooks';
import type { ZooKeeperClient } from './zklock.js';
import type { Bench } from './context.js';
import type { NodeLockSession } from './lock-session.js';
import { measure, sleep } from './measure.js';
import { connectZklock } from './peers/ops-client.js';
import type { LockEvent, PeerResult } from './peers/peer-run.js';
import { totalWatches, withTraffic } from './server-traffic.js';

/** What every library's side of the herd scenario gives (Curator's and kazoo's from their processes). */
export interface HerdRun extends PeerResult {
  events: LockEvent[];
  /** With `wakes`: what the sessions' own count of their waiters' wake-ups came to over the drain. */
  woken?: number;
}

const QUEUE_BOUND_MS = 120_000;

/**
 * `sessions × waitersPerSession` waiters queue on one lock behind a holder (on a session of its
 * own); once all are queued and watching, the holder releases and each waiter releases as soon
 * as it holds, so the lock is handed down the queue. The server's counters are read around that
 * drain alone, as CuratorBench.java's and kazoo_bench.py's herd() do for theirs. `wakes`, when
 * the sessions count their waiters' wake-ups into it, is zeroed before the drain.
 */
export async function herd(
  bench: Bench,
  path: string,
  sessions: number,
  waitersPerSession: number,
  open: (connectString: string) => Promise<NodeLockSession>,
  wakes?: { count: number },
): Promise<HerdRun> {
  const waiters = sessions * waitersPerSession;
  const holder = await open(bench.connectString);
  const clients = await Promise.all(Array.from({ length: sessions }, () => open(bench.connectString)));
  const observer = await connectZklock(bench.connectString);
  try {
    const first = await holder.mutex(path).acquire({ timeout: QUEUE_BOUND_MS });
    const events: LockEvent[] = [];
    const drained = Promise.all(
      Array.from({ length: waiters }, async (_, w) => {
        const held = await clients[w % sessions]!.mutex(path).acquire({ timeout: QUEUE_BOUND_MS });
        const now = performance.now();
        events.push([0, now, w], [1, now, w]);
        await held.release();
      }),
    );
    await waitForQueue(observer, path, waiters + 1);
    const queuedWatches = await waitForWatches(bench, waiters);
    if (wakes) wakes.count = 0;
    const { server, ...m } = await withTraffic(bench, () =>
      measure(waiters, async () => {
        events.push([1, performance.now(), -1]);
        await first.release();
        await drained;
      }),
    );
    return { ...m, events, queuedWatches, server, woken: wakes?.count };
  } finally {
    await Promise.all([holder, ...clients, observer].map((c) => c.close()));
  }
}

/** Polls the lock's children through a session of the bench's own, whatever library the waiters use. */
async function waitForQueue(client: ZooKeeperClient, path: string, size: number): Promise<void> {
  const until = performance.now() + QUEUE_BOUND_MS;
  while ((await client.getChildren(path)).children.length < size) {
    if (performance.now() > until) throw new Error(`fewer than ${size} contenders queued on ${path} after ${QUEUE_BOUND_MS} ms`);
    await sleep(20);
  }
}

/** Waiters set their watch just after their node shows up in the queue: poll wchs until all are counted (or give up after 5 s and report what is there). */
async function waitForWatches(bench: Bench, atLeast: number): Promise<number | undefined> {
  let watches: number | undefined;
  for (let attempt = 0; attempt < 100; attempt++) {
    watches = totalWatches(await bench.fourLetterWord('wchs'));
    if (watches === undefined || watches >= atLeast) return watches;
    await sleep(50);
  }
  return watches;
}
