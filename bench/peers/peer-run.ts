import type { Measurement } from '../measure.js';
import { runProcess } from '../run-process.js';
import type { ServerTraffic } from '../server-traffic.js';
import { trafficBetween } from '../server-traffic.js';

/** [kind, ms, session]: kind 0 = an acquire resolved, 1 = `release()` called (the shape every side records). */
export type LockEvent = [0 | 1, number, number];

/**
 * The multi-session scenarios as a peer's process takes them: `contend` loops on Mutexes (or
 * ReadWriteLocks, with `readRatio`), `semaphore` on semaphores of `leases` leases.
 */
export type PeerContention =
  | { scenario: 'contend'; root: string; sessions: number; locks: number; durationMs: number; readRatio?: number }
  | { scenario: 'semaphore'; root: string; sessions: number; locks: number; durationMs: number; leases: number; holdMs: number };

/**
 * A queue handed down: `sessions` × `waitersPerSession` waiters queue behind one holder, which
 * then releases; each waiter releases as soon as it holds (bench/herd.ts has the zklock side).
 */
export interface PeerHerd {
  scenario: 'herd';
  root: string;
  sessions: number;
  waitersPerSession: number;
}

/**
 * The herd as one long queue (bench/long-queue.ts): besides the drain, the time the queue took to
 * form and the memory the queued waiters add to the process, with waits bounded by `boundS`.
 */
export interface PeerLongQueue extends Omit<PeerHerd, 'scenario'> {
  scenario: 'longqueue';
  boundS: number;
}

/** A scenario's spec as the peers' programs take it: snake_case keys, the hosts added, unset ones left out. */
export function wireSpec(connectString: string, spec: object): Record<string, string | number> {
  return Object.fromEntries(
    Object.entries({ ...spec, hosts: connectString })
      .filter(([, value]) => value !== undefined)
      .map(([key, value]) => [key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`), value as string | number]),
  );
}

/** What a peer's process (kazoo in Python, Curator in a JVM) measured in one scenario. */
export interface PeerResult extends Measurement {
  perSession?: number[];
  events?: LockEvent[];
  /** Semaphore scenario: the most sessions that held one semaphore at once, counted by the peer's harness. */
  maxHolders?: number;
  /** Herd scenario: the server's watch count once every waiter was queued. */
  queuedWatches?: number;
  /** Herd scenario: from the first waiter's acquire to the last watch the server counted, when the queue had formed (ms). */
  joinMs?: number;
  /** Long queue: the heap the queued waiters added (bytes; after full collections, each runtime as its side says). */
  heapBytes?: number;
  /** Long queue: the resident set the queued waiters added (bytes; /proc). */
  rssBytes?: number;
  /** Set when the peer had to be patched to run the scenario at all. */
  note?: string;
  /** What the server counted over the timed window (lock scenarios). */
  server?: ServerTraffic;
}

/** The one JSON line a peer process prints last. */
interface RawResult {
  ops: number;
  wall_ms: number;
  cpu_us: number;
  per_session?: number[];
  events?: LockEvent[];
  max_holders?: number;
  queued_watches?: number;
  join_ms?: number;
  heap_bytes?: number;
  rss_bytes?: number;
  note?: string | null;
  /** The server's `mntr` answers from just before and just after the timed window. */
  mntr_before?: string;
  mntr_after?: string;
}


/** Runs a peer's process to its end and parses the JSON line it printed last. */
export async function runPeer(file: string, args: readonly string[], timeoutMs?: number): Promise<PeerResult> {
  const stdout = await runProcess(file, args, timeoutMs);
  const last = stdout.trim().split('\n').at(-1) ?? '';
  let raw: RawResult;
  try {
    raw = JSON.parse(last) as RawResult;
  } catch (error) {
    throw new Error(`${file} printed no result line: ${last.slice(0, 200)}`, { cause: error });
  }
  const server = raw.mntr_before !== undefined && raw.mntr_after !== undefined ? trafficBetween(raw.mntr_before, raw.mntr_after) : undefined;
  return {
    ops: raw.ops,
    wallMs: raw.wall_ms,
    cpuUs: raw.cpu_us,
    perSession: raw.per_session,
    events: raw.events,
    maxHolders: raw.max_holders,
    queuedWatches: raw.queued_watches,
    joinMs: raw.join_ms,
    heapBytes: raw.heap_bytes,
    rssBytes: raw.rss_bytes,
    note: raw.note ?? undefined,
    server,
  };
}
