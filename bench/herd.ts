import { performance } from 'node:perf_hooks';
import type { ZooKeeperClient } from './zklock.js';
import type { Bench } from './context.js';
import type { NodeLockSession } from './lock-session.js';
import { measure, sleep } from './measure.js';
import { connectZklock } from './peers/ops-client.js';
import type { LockEvent, PeerResult } from './peers/peer-run.js';
import type { ServerProbe } from './server-traffic.js';
import { totalWatches, withTraffic } from './server-traffic.js';

/** What every library's side of the herd scenario gives (Curator's and kazoo's from their processes). */
export interface HerdRun extends PeerResult {
  events: LockEvent[];
  /** With `wakes`: the watch events the sessions were told over the drain (zklock:client:watch). */
  woken?: number;
}

/** A process's memory as the long-queue row counts it: the heap after gc() (heap.ts) and the resident set. */
export interface Memory {
  heapBytes: number;
  rssBytes: number;
}

/** The server a herd runs on: the bench's, or the one a probe process was given. */
export type HerdServer = ServerProbe & Pick<Bench, 'connectString'>;

export interface HerdOptions {
  /** The sessions count their waiters' wake-ups into it; zeroed before the timed drain. */
  wakes?: { count: number };
  /** The process's memory (heap.ts); given, what the queued waiters add to it is measured (heapBytes, rssBytes). */
  memory?: () => Memory;
  /** How long the queue may take to form, and a waiter to get the lock (ms). */
  boundMs?: number;
}

const QUEUE_BOUND_MS = 120_000;
/** How often the server's watch count is read while the queue forms: the join time's resolution. */
const POLL_MS = 20;
/** The watch count must hold this long before the queue counts as formed. */
const SETTLE_MS = 500;

/**
 * `sessions × waitersPerSession` waiters queue on one lock behind a holder (on a session of its
 * own); once all are queued and the server's watch count has settled, the holder releases and
 * each waiter releases as soon as it holds, so the lock is handed down the queue. The server's
 * counters are read around that drain alone, as CuratorBench.java's and kazoo_bench.py's herd()
 * do for theirs. An untimed drain of `sessions × 2` waiters on another path goes first, on the
 * same sessions, as the peers' do (a JVM needs it; every side gets it).
 */
export async function herd(
  bench: HerdServer,
  path: string,
  sessions: number,
  waitersPerSession: number,
  open: (connectString: string) => Promise<NodeLockSession>,
  options: HerdOptions = {},
): Promise<HerdRun> {
  const holder = await open(bench.connectString);
  const clients = await Promise.all(Array.from({ length: sessions }, () => open(bench.connectString)));
  const observer = await connectZklock(bench.connectString);
  try {
    const drain = (at: string, waiters: number, measured: HerdOptions): Promise<HerdRun> => drainQueue(bench, { holder, clients, observer }, at, waiters, measured);
    await drain(`${path}-warmup`, sessions * Math.min(2, waitersPerSession), { boundMs: options.boundMs });
    return await drain(path, sessions * waitersPerSession, options);
  } finally {
    await Promise.all([holder, ...clients, observer].map((c) => c.close()));
  }
}

async function drainQueue(
  bench: ServerProbe,
  { holder, clients, observer }: { holder: NodeLockSession; clients: NodeLockSession[]; observer: ZooKeeperClient },
  path: string,
  waiters: number,
  { wakes, memory, boundMs = QUEUE_BOUND_MS }: HerdOptions,
): Promise<HerdRun> {
  const first = await holder.mutex(path).acquire({ timeout: boundMs });
  // The holder's hold is the first in the log, so the handoff from its release counts too.
  const events: LockEvent[] = [[0, performance.now(), -1]];
  const memoryBefore = memory?.();
  const joinStart = performance.now();
  // The heap per waiter is measured here (long-queue-probe.ts), so the benchmark's own share of a
  // waiter is kept to a reaction and a promise: no async function (a suspended frame per waiter,
  // about 500 bytes), no Promise.all element, one options object for all. Events name each hold
  // by its place in the order of holds: all the handoff summary needs to pair them.
  const options = { timeout: boundMs };
  let holds = 0;
  let left = waiters;
  let drainedAll!: () => void;
  let failedOne!: (error: unknown) => void;
  const drained = new Promise<void>((resolve, reject) => ((drainedAll = resolve), (failedOne = reject)));
  const released = (): void => {
    if (--left === 0) drainedAll();
  };
  const onHeld = (held: { release(): Promise<unknown> }): void => {
    const now = performance.now();
    const who = holds++;
    events.push([0, now, who], [1, now, who]);
    held.release().then(released, failedOne);
  };
  for (let w = 0; w < waiters; w++) void clients[w % clients.length]!.mutex(path).acquire(options).then(onHeld, failedOne);
  // Awaited below; until then a waiter's early failure must not be an unhandled rejection, and
  // ends the wait for the queue, which without that waiter never forms.
  const failed: { error?: unknown } = {};
  drained.catch((error: unknown) => (failed.error = error));
  const { watches: queuedWatches, settledAt } = await waitForQueue(bench, observer, path, waiters, joinStart + boundMs, failed);
  const memoryQueued = memory?.();
  const added = memoryBefore && memoryQueued ? { heapBytes: memoryQueued.heapBytes - memoryBefore.heapBytes, rssBytes: memoryQueued.rssBytes - memoryBefore.rssBytes } : {};
  if (wakes) wakes.count = 0;
  const { server, ...m } = await withTraffic(bench, () =>
    measure(waiters, async () => {
      events.push([1, performance.now(), -1]);
      await first.release();
      await drained;
    }),
  );
  return { ...m, events, queuedWatches, joinMs: settledAt - joinStart, ...added, server, woken: wakes?.count };
}

/**
 * Waiters set their watches just after their nodes show up in the queue, one or two each
 * depending on the library (zklock's also watch their own node): polls wchs every 20 ms until it
 * holds at least one per waiter and has not moved for 500 ms, and the lock's children (listed by
 * a session of the bench's own, whatever library the waiters use) are the holder and every
 * waiter; or throws at `until` (a drain started with watches still being set would count their
 * requests), or with a waiter's failure once `failed` has one. `settledAt` is when the count it
 * kept was first seen: the last watch set, that is the queue formed.
 */
async function waitForQueue(bench: ServerProbe, observer: ZooKeeperClient, path: string, waiters: number, until: number, failed: { error?: unknown }): Promise<{ watches: number; settledAt: number }> {
  let watches = -1;
  let settledAt = performance.now();
  for (;;) {
    if ('error' in failed) throw failed.error;
    const now = performance.now();
    const count = totalWatches(await bench.fourLetterWord('wchs'));
    if (count === undefined) throw new Error('wchs gave no watch count');
    if (count !== watches) [watches, settledAt] = [count, now];
    if (watches >= waiters && now - settledAt >= SETTLE_MS && (await observer.getChildren(path)).children.length >= waiters + 1) return { watches, settledAt };
    if (now > until) throw new Error(`the queue on ${path} did not form: ${waiters} waiters, the server's watch count ${watches}, not settled at ${waiters} or more in time`);
    await sleep(POLL_MS);
  }
}
