import assert from 'node:assert/strict';
import type { ClientOptions, RequestMessage, WatchMessage } from '../../src/index.js';
import { LockError, ZooKeeperClient, ZooKeeperError, parseContender, requestChannel, watchChannel } from '../../src/index.js';
import type { RequestDecider, ZooKeeperServerOptions } from '../../src/testing/index.js';
import { FaultProxy, ZooKeeperServer } from '../../src/testing/index.js';
import { ROUND_TRIPS_MS, WAITER_TIMEOUT_MS } from '../support/bounds.js';
import type { HoldInterval } from '../support/intervals.js';

/** Short ticks so that session timeouts of a second or two are granted: fault tests run in seconds. */
export const FAST_SERVER = { tickTime: 200, minSessionTimeout: 400, maxSessionTimeout: 20_000 } as const;

/**
 * One standalone server per test file plus the clients its tests open, all closed by `close()`
 * (clients first, so their sessions end before the server goes).
 */
export class RecipeFixture {
  private readonly clients = new Set<ZooKeeperClient>();
  private readonly proxies = new Set<FaultProxy>();

  private constructor(
    readonly server: ZooKeeperServer,
    readonly admin: ZooKeeperClient,
  ) {}

  static async start(options: ZooKeeperServerOptions = {}): Promise<RecipeFixture> {
    const server = await ZooKeeperServer.start({ ...FAST_SERVER, ...options });
    const admin = await ZooKeeperClient.connect(server.connectString, { sessionTimeout: 10_000 });
    return new RecipeFixture(server, admin);
  }

  async client(options: ClientOptions = {}): Promise<ZooKeeperClient> {
    const client = await ZooKeeperClient.connect(this.server.connectString, { sessionTimeout: 10_000, ...options });
    this.clients.add(client);
    return client;
  }

  /** A client whose only way to the server is a fault proxy. */
  async viaProxy(options: ClientOptions = {}, onRequest?: RequestDecider): Promise<{ client: ZooKeeperClient; proxy: FaultProxy }> {
    const proxy = await FaultProxy.start({ targetPort: this.server.port, ...(onRequest && { onRequest }) });
    this.proxies.add(proxy);
    const client = await ZooKeeperClient.connect(proxy.connectString, { sessionTimeout: 2000, ...options });
    this.clients.add(client);
    return { client, proxy };
  }

  /** Sorted child names, or [] when the path is gone. */
  async children(path: string): Promise<string[]> {
    try {
      return (await this.admin.getChildren(path)).children.sort();
    } catch (error) {
      if (error instanceof ZooKeeperError && error.code === 'NONODE') return [];
      throw error;
    }
  }

  /**
   * No node left under `path`. A node an acquire gave up on may still be on its way out: the
   * rejection waits for its delete only briefly (giveUpNode in src/recipes/support/abandon.ts), so this
   * waits a few round trips for the path to empty first. A leaked node never goes: its session lives on.
   */
  async assertNoNodes(path: string, why = 'no contender node is left'): Promise<void> {
    const until = Date.now() + ROUND_TRIPS_MS;
    while ((await this.children(path)).length > 0 && Date.now() < until) await sleep(50);
    assert.deepEqual(await this.children(path), [], why);
  }

  async close(): Promise<void> {
    await Promise.all([...this.clients].map((c) => c.close()));
    await Promise.all([...this.proxies].map((p) => p.close()));
    await this.admin?.close();
    await this.server?.close();
  }
}

/** The queue sequence of a contender node path. */
export function seqOf(nodePath: string): number {
  const parsed = parseContender(nodePath.slice(nodePath.lastIndexOf('/') + 1));
  assert.ok(parsed, `${nodePath} is a contender name`);
  return parsed.seq;
}

/** One critical section, as a holder saw it: bounds on the shared clock (ms, sub-ms precision), fencing token and queue sequence. */
export interface Interval {
  who: string;
  start: number;
  end: number;
  token: string;
  seq: number;
}

/**
 * A clock that every process on this machine reads alike, in ms with sub-millisecond resolution:
 * the kernel's CLOCK_MONOTONIC (Python's time.monotonic()). performance.timeOrigin + now() is not
 * one: each process fixes its origin at startup from two clock reads, and on a busy machine the
 * origins of two processes differ by milliseconds, enough to show two holders where there were none.
 */
export function sharedNow(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/**
 * The invariants of a fair exclusive lock over all recorded critical sections: ordered by
 * fencing token, each ends before the next starts (never two holders), and queue sequences grow
 * in the same order (FIFO: the lock goes in the order contenders queued).
 */
export function assertFairExclusion(intervals: readonly Interval[]): void {
  const byToken = [...intervals].sort((a, b) => (BigInt(a.token) < BigInt(b.token) ? -1 : 1));
  const tokens = new Set(byToken.map((i) => i.token));
  assert.equal(tokens.size, byToken.length, 'every acquisition has its own fencing token');
  for (let i = 1; i < byToken.length; i++) {
    const prev = byToken[i - 1]!;
    const next = byToken[i]!;
    assert.ok(prev.end <= next.start, `two holders at once: ${JSON.stringify(prev)} overlaps ${JSON.stringify(next)}`);
    assert.ok(next.seq > prev.seq, `FIFO broken: token ${next.token} (seq ${next.seq}) acquired after token ${prev.token} (seq ${prev.seq})`);
  }
}

/** What `holdLoop` takes turns on: a lock, a semaphore or a multi-lock. */
interface Acquirable {
  acquire(options: { timeout: number }): Promise<{ release(): Promise<void> }>;
}

/** `cycles` times: acquire, hold `holdMs`, release; each hold as seen on the shared clock. */
export async function holdLoop(lock: Acquirable, who: string, cycles: number, exclusive: boolean, holdMs = 5): Promise<HoldInterval[]> {
  const intervals: HoldInterval[] = [];
  for (let i = 0; i < cycles; i++) {
    const lease = await lock.acquire({ timeout: WAITER_TIMEOUT_MS });
    const start = sharedNow();
    await sleep(holdMs);
    intervals.push({ who, start, end: sharedNow(), exclusive });
    await lease.release();
  }
  return intervals;
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Rejects with `what` if `promise` has not settled within `ms`: every wait in these tests is bounded. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not settled within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The requests a client sends that read or write the tree (its heartbeat's syncs apart). */
const TREE_REQUESTS: ReadonlySet<string> = new Set(['create', 'delete', 'exists', 'getData', 'setData', 'getChildren', 'multi', 'multiRead', 'setACL', 'removeWatches']);

/**
 * Calls `record` with the op and path of every request `client` sends from now on whose op is in
 * `ops`, as zklock:client:request tells them (see src/client/diagnostics.ts), until it closes.
 */
export function onRequests(client: ZooKeeperClient, ops: ReadonlySet<string>, record: (op: string, path: string | undefined) => void): void {
  // Published synchronously inside the client's call: its session id then is the message's.
  const listener = (message: unknown): void => {
    const { op, path, sessionId } = message as RequestMessage;
    if (ops.has(op) && sessionId === `0x${client.sessionId.toString(16)}`) record(op, path);
  };
  requestChannel.start.subscribe(listener);
  client.once('closed', () => requestChannel.start.unsubscribe(listener));
}

/**
 * The watch notifications the server sends to `clients`' sessions from now on for nodes under
 * `parent`, as zklock:client:watch tells them (the herd measure: what a release wakes), until
 * `stop()`.
 */
export function recordWatchEvents(clients: readonly ZooKeeperClient[], parent: string): { events: WatchMessage[]; stop: () => void } {
  const events: WatchMessage[] = [];
  const listener = (data: unknown): void => {
    const message = data as WatchMessage;
    if (message.path.startsWith(`${parent}/`) && clients.some((c) => message.sessionId === `0x${c.sessionId.toString(16)}`)) events.push(message);
  };
  watchChannel.subscribe(listener);
  return { events, stop: () => watchChannel.unsubscribe(listener) };
}

/** Records the path of every listing the client sends from now on. */
export function countListings(client: ZooKeeperClient): string[] {
  const listed: string[] = [];
  onRequests(client, new Set(['getChildren']), (_, path) => listed.push(path!));
  return listed;
}

/** Records `<op> <path>` for every tree request the client sends from now on. */
export function recordRequests(client: ZooKeeperClient): string[] {
  const sent: string[] = [];
  onRequests(client, TREE_REQUESTS, (op, path) => sent.push(path === undefined ? op : `${op} ${path}`));
  return sent;
}

/** A predicate for assert.rejects/throws: a LockError with `code`. */
export function isLockError(code: string): (error: unknown) => boolean {
  return (error) => error instanceof LockError && error.code === code;
}

/** Records a promise's settlement so a test can assert it has not happened yet. */
export function track<T>(promise: Promise<T>): { promise: Promise<T>; readonly settled: boolean } {
  let settled = false;
  const tracked = promise.finally(() => (settled = true));
  tracked.catch(() => undefined);
  return {
    promise: tracked,
    get settled() {
      return settled;
    },
  };
}
