/**
 * zklock's heap per lease held and per waiter queued, in a process of its own (`node
 * --expose-gc`), so that the benchmark's own heap is not in the figures. `bench/memory.ts` runs
 * it; it prints one JSON object on stdout:
 *
 *   memory-probe <connectString> <root> <count>
 *
 * 1. leases: a client (the holder) acquires a Mutex on each of `count` paths under `root`;
 *    heap after minus heap before, over `count`.
 * 2. waiters: a second client (one session) calls acquire() on a Mutex of each of those paths,
 *    and the calls wait behind the holder's leases. Once every queue has both contenders and the
 *    server counts a watch for each waiter, heap after minus heap before (which already holds
 *    the leases), over `count`.
 * Then the holder releases, each waiter gets its lease and releases it, and every queue must be
 * empty before both clients close.
 *
 * The arrays holding the Mutexes, the acquires and the leases are allocated before the baselines:
 * what a user keeps per lock (its Mutex object, its lease or its pending acquire) is counted, the
 * benchmark's bookkeeping is not.
 *
 *   memory-probe <connectString> <root> <count> one-lock <sessions>
 *
 * One long queue instead: `sessions` clients wait with `count` acquires in all (round robin) on
 * one Mutex path, behind another client's lease. Heap per waiter once the queue holds them all and
 * the server counts both watches of each, how long joining and draining took (each lease released
 * as it comes), and the server's packets received per handoff while draining.
 */
import { performance } from 'node:perf_hooks';
import { fourLetterWord } from '../src/testing/index.js';
import { heapAfterGc } from './heap.js';
import { inFlight, sleep } from './measure.js';
import { connectZklock } from './peers/ops-client.js';
import type { ZooKeeperClient } from './zklock.js';
import { Mutex } from './zklock.js';
import { totalWatches } from './server-traffic.js';

type Lease = Awaited<ReturnType<Mutex['acquire']>>;

/** Acquires and releases with this many in flight: far faster than one at a time on an fsyncing server, and small next to `count`. */
const CONCURRENCY = 100;
const QUEUE_BOUND_MS = 120_000;

function placeholders<T>(count: number, fill: T): T[] {
  return new Array<T>(count).fill(fill);
}

/** A waiter with one holder ahead watches that holder's node and its own (queue/own-node.ts, watchOwnNode). */
const WATCHES_PER_WAITER = 2;

/** The server's `Total watches` (wchs). */
async function serverWatches(port: number): Promise<number> {
  // A server answering thousands of joins, each listing a long queue, can take its time.
  const watches = totalWatches(await fourLetterWord(port, 'wchs', { timeoutMs: 30_000 }));
  if (watches === undefined) throw new Error('wchs gave no watch count');
  return watches;
}

/** Contenders queued on each path (the holder's client asks, in flight). */
async function queueSizes(client: ZooKeeperClient, paths: readonly string[]): Promise<number[]> {
  const sizes = placeholders(paths.length, 0);
  await inFlight(paths.length, CONCURRENCY, async (i) => {
    sizes[i] = (await client.getChildren(paths[i]!)).children.length;
  });
  return sizes;
}

async function main(): Promise<Record<string, number>> {
  const [connectString, root, countArg] = process.argv.slice(2);
  const count = Number(countArg);
  if (!connectString || !root || !Number.isInteger(count)) throw new Error('usage: memory-probe <connectString> <root> <count>');
  const port = Number(connectString.split(':').at(-1));
  const paths = Array.from({ length: count }, (_, i) => `${root}/lock-${i}`);
  const holder = await connectZklock(connectString);
  const waiter = await connectZklock(connectString);
  try {
    // Warm: the first acquire compiles the recipe's paths and sets up the client's heartbeat, which every later lease shares.
    await (await new Mutex(holder, `${root}/warm`).acquire()).release();
    const leases = placeholders<Lease | undefined>(count, undefined);
    const held = placeholders<Mutex | undefined>(count, undefined);
    const heapBeforeLeases = heapAfterGc();
    const t0 = performance.now();
    await inFlight(count, CONCURRENCY, async (i) => {
      const mutex = new Mutex(holder, paths[i]!);
      held[i] = mutex;
      leases[i] = await mutex.acquire();
    });
    const acquireMs = performance.now() - t0;
    const heapWithLeases = heapAfterGc();

    const watchesBefore = await serverWatches(port);
    const acquires = placeholders<Promise<Lease> | undefined>(count, undefined);
    probeAcquires = acquires;
    const waiting = placeholders<Mutex | undefined>(count, undefined);
    const heapBeforeWaiters = heapAfterGc();
    for (let i = 0; i < count; i++) {
      const mutex = new Mutex(waiter, paths[i]!);
      waiting[i] = mutex;
      acquires[i] = mutex.acquire();
    }
    // Queued means: a node behind the holder's in every queue, and the server holding both
    // watches each waiter sets (on what it waits for, and on its own node).
    const until = performance.now() + QUEUE_BOUND_MS;
    let watches = 0;
    while ((watches = (await serverWatches(port)) - watchesBefore) < WATCHES_PER_WAITER * count) {
      if (performance.now() > until) throw new Error(`only ${watches} watches for ${count} waiters after ${QUEUE_BOUND_MS} ms`);
      await sleep(50);
    }
    const sizes = await queueSizes(holder, paths);
    const short = sizes.filter((size) => size !== 2).length;
    if (short > 0) throw new Error(`${short} of ${count} queues do not hold exactly the holder and the waiter`);
    const heapWithWaiters = heapAfterGc();

    await inFlight(count, CONCURRENCY, (i) => leases[i]!.release());
    await inFlight(count, CONCURRENCY, async (i) => (await acquires[i]!).release());
    const left = (await queueSizes(holder, paths)).filter((size) => size !== 0).length;
    if (left > 0) throw new Error(`${left} of ${count} queues still hold a contender after every lease was released`);
    return {
      bytesPerLease: (heapWithLeases - heapBeforeLeases) / count,
      bytesPerWaiter: (heapWithWaiters - heapBeforeWaiters) / count,
      serverWatchesPerWaiter: watches / count,
      acquireMs,
      // Read after the measurements so that the Mutexes (kept as a user would keep them) live through them.
      mutexesKept: held.filter(Boolean).length + waiting.filter(Boolean).length,
    };
  } finally {
    await Promise.all([holder.close(), waiter.close()]);
  }
}

/** The server's `zk_packets_received`. */
async function packetsReceived(port: number): Promise<number> {
  const match = /zk_packets_received\s+(\d+)/.exec(await fourLetterWord(port, 'mntr', { timeoutMs: 30_000 }));
  if (!match) throw new Error('mntr gave no zk_packets_received');
  return Number(match[1]);
}

/** At most this many waiters of one queue follow the rest of it (KEPT_AHEAD in src/recipes/queue-watch.ts). */
const FOLLOWING = 17;

async function oneLock(connectString: string, root: string, count: number, sessions: number): Promise<Record<string, number>> {
  const port = Number(connectString.split(':').at(-1));
  const path = `${root}/one-lock`;
  const holder = await connectZklock(connectString);
  const clients = await Promise.all(Array.from({ length: sessions }, () => connectZklock(connectString)));
  try {
    await (await new Mutex(clients[0]!, `${root}/warm`).acquire()).release();
    const lease = await new Mutex(holder, path).acquire();
    const watchesBefore = await serverWatches(port);
    const acquires = placeholders<Promise<Lease> | undefined>(count, undefined);
    probeAcquires = acquires;
    const waiting = placeholders<Mutex | undefined>(count, undefined);
    const heapBefore = heapAfterGc();
    const t0 = performance.now();
    for (let i = 0; i < count; i++) {
      const mutex = new Mutex(clients[i % sessions]!, path);
      waiting[i] = mutex;
      acquires[i] = mutex.acquire();
    }
    const until = performance.now() + QUEUE_BOUND_MS * 5;
    let watches = 0;
    // The server counts a path once per session: the few near the front that follow the rest of
    // the queue (queue-lookahead.ts) may watch what a neighbour of their session watches.
    while ((watches = (await serverWatches(port)) - watchesBefore) < WATCHES_PER_WAITER * (count - FOLLOWING)) {
      if (performance.now() > until) throw new Error(`only ${watches} watches for ${count} waiters after ${QUEUE_BOUND_MS * 5} ms`);
      await sleep(50);
    }
    const joinMs = performance.now() - t0;
    const [size] = await queueSizes(holder, [path]);
    if (size !== count + 1) throw new Error(`the queue holds ${size} contenders, not the holder and ${count} waiters`);
    const heapWithWaiters = heapAfterGc();
    const packetsBefore = await packetsReceived(port);
    const t1 = performance.now();
    await lease.release();
    await Promise.all(acquires.map(async (acquire) => (await acquire!).release()));
    const drainMs = performance.now() - t1;
    const packets = (await packetsReceived(port)) - packetsBefore;
    const [left] = await queueSizes(holder, [path]);
    if (left !== 0) throw new Error(`${left} contenders left after every lease was released`);
    return {
      bytesPerWaiter: (heapWithWaiters - heapBefore) / count,
      heapWithWaiters,
      serverWatchesPerWaiter: watches / count,
      joinMs,
      drainMs,
      // Each handoff's packets (release, the next one's wake-up checks) and the probe's own mntr/wchs, which are few.
      packetsPerHandoff: packets / count,
      mutexesKept: waiting.filter(Boolean).length,
    };
  } finally {
    await Promise.all([holder, ...clients].map((client) => client.close()));
  }
}

/**
 * Closing on a failure rejects the acquires still waiting: the failure is the one to report, and
 * every acquire is awaited once the waiters are measured. Not a .catch() on each acquire: its
 * promise and reaction, 100 bytes a waiter, are the benchmark's bookkeeping, not zklock's.
 */
let probeAcquires: readonly (Promise<unknown> | undefined)[] = [];
process.on('unhandledRejection', (reason, promise) => {
  if (!probeAcquires.includes(promise)) throw reason;
});

const [, , probeConnect, probeRoot, probeCount, mode, sessionsArg] = process.argv;
console.log(JSON.stringify(mode === 'one-lock' ? await oneLock(probeConnect!, probeRoot!, Number(probeCount), Number(sessionsArg)) : await main()));
