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
  /** With `wakes`: the watch events the sessions were told over the drain (zklock:client:watch). */
  woken?: number;
}

const QUEUE_BOUND_MS = 120_000;
const WATCHES_BOUND_MS = 30_000;

/**
 * `sessions × waitersPerSession` waiters queue on one lock behind a holder (on a session of its
 * own); once all are queued and the server's watch count has settled, the holder releases and
 * each waiter releases as soon as it holds, so the lock is handed down the queue. The server's
 * counters are read around that drain alone, as CuratorBench.java's and kazoo_bench.py's herd()
 * do for theirs. An untimed drain of `sessions × 2` waiters on another path goes first, on the
 * same sessions, as the peers' do (a JVM needs it; every side gets it). `wakes`, when the
 * sessions count their waiters' wake-ups into it, is zeroed before the timed drain.
 */
export async function herd(
  bench: Bench,
  path: string,
  sessions: number,
  waitersPerSession: number,
  open: (connectString: string) => Promise<NodeLockSession>,
  wakes?: { count: number },
): Promise<HerdRun> {
  const holder = await open(bench.connectString);
  const clients = await Promise.all(Array.from({ length: sessions }, () => open(bench.connectString)));
  const observer = await connectZklock(bench.connectString);
  try {
    const drain = (at: string, waiters: number): Promise<HerdRun> => drainQueue(bench, { holder, clients, observer }, at, waiters, wakes);
    await drain(`${path}-warmup`, sessions * Math.min(2, waitersPerSession));
    return await drain(path, sessions * waitersPerSession);
  } finally {
    await Promise.all([holder, ...clients, observer].map((c) => c.close()));
  }
}

async function drainQueue(
  bench: Bench,
  { holder, clients, observer }: { holder: NodeLockSession; clients: NodeLockSession[]; observer: ZooKeeperClient },
  path: string,
  waiters: number,
  wakes: { count: number } | undefined,
): Promise<HerdRun> {
  const first = await holder.mutex(path).acquire({ timeout: QUEUE_BOUND_MS });
  // The holder's hold is the first in the log, so the handoff from its release counts too.
  const events: LockEvent[] = [[0, performance.now(), -1]];
  const drained = Promise.all(
    Array.from({ length: waiters }, async (_, w) => {
      const held = await clients[w % clients.length]!.mutex(path).acquire({ timeout: QUEUE_BOUND_MS });
      const now = performance.now();
      events.push([0, now, w], [1, now, w]);
      await held.release();
    }),
  );
  // Awaited below; until then a waiter's early failure must not be an unhandled rejection.
  drained.catch(() => undefined);
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
}

/** Polls the lock's children through a session of the bench's own, whatever library the waiters use. */
async function waitForQueue(client: ZooKeeperClient, path: string, size: number): Promise<void> {
  const until = performance.now() + QUEUE_BOUND_MS;
  while ((await client.getChildren(path)).children.length < size) {
    if (performance.now() > until) throw new Error(`fewer than ${size} contenders queued on ${path} after ${QUEUE_BOUND_MS} ms`);
    await sleep(20);
  }
}

/**
 * Waiters set their watches just after their nodes show up in the queue, one or two each
 * depending on the library (zklock's also watch their own node): polls wchs until it holds at
 * least one per waiter and has stopped rising over three polls, or gives up after 30 s and
 * throws (a drain started with watches still being set would count their requests).
 */
async function waitForWatches(bench: Bench, atLeast: number): Promise<number> {
  const until = performance.now() + WATCHES_BOUND_MS;
  let last = -1;
  let steady = 0;
  for (;;) {
    const watches = totalWatches(await bench.fourLetterWord('wchs'));
    if (watches === undefined) throw new Error('wchs gave no watch count');
    steady = watches === last ? steady + 1 : 0;
    last = watches;
    if (watches >= atLeast && steady >= 3) return watches;
    if (performance.now() > until) throw new Error(`the server's watch count did not settle at ${atLeast} or more within ${WATCHES_BOUND_MS} ms (last ${watches})`);
    await sleep(100);
  }
}
