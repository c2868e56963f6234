import type { AcquireOptions, Lease, LockOptions, MultiLease, TryAcquireOptions, ZooKeeperClient } from '../../src/index.js';
import { MultiLock, Mutex, NonReentrantMutex, ReadWriteLock, Semaphore, SimpleLock, ZooKeeperError, joinPath } from '../../src/index.js';
import type { FaultProxy } from '../../src/testing/index.js';
import { eventually } from '../support/wait.js';

/**
 * One table of lock kinds for behavioural suites that must hold for every recipe (Curator's
 * TestInterProcessMutexBase.makeLock pattern): each entry says how to make the lock under test,
 * a rival that excludes it, and where its nodes live, so a test can check them independently.
 */

/** The options of the lock under test that the suites vary. */
export type MakeOptions = Pick<LockOptions, 'failOnSessionExpiry' | 'safetyMargin'>;

/** What every recipe hands out: a Lease, or a MultiLease for the multi-lock. */
export type AnyLease = Lease | MultiLease;

/** The two calls every lock kind has, whatever its lease type. */
export interface AnyLock {
  acquire(options?: AcquireOptions): Promise<AnyLease>;
  tryAcquire(options?: TryAcquireOptions): Promise<AnyLease | null>;
}

export interface LockKind {
  readonly name: string;
  /** The lock under test. `failOnSessionExpiry` only for kinds with `hasFailOnSessionExpiry`; `safetyMargin` for every kind (a multi-lock's every lock). */
  make(client: ZooKeeperClient, path: string, options?: MakeOptions): AnyLock;
  /** A lock that cannot be held together with `make`'s (a writer for the read lock): the other session of every test. */
  rival(client: ZooKeeperClient, path: string): AnyLock;
  /** Whether the recipe has the `failOnSessionExpiry` option. */
  readonly hasFailOnSessionExpiry: boolean;
  /** The parents of every node the lock creates (for SimpleLock, the node's own parent). */
  parents(path: string): string[];
  /** Whether a child of `parents` is one of this lock's nodes (SimpleLock shares its parent with nothing else here, but says so). */
  isOurs?(path: string, child: string): boolean;
  /** Nodes a waiter of `make` holds while a rival holds the lock (its queue places, locks already taken). */
  readonly waiterNodes: number;
  /** Nodes a waiting rival holds while `make`'s lease holds the lock. */
  readonly rivalWaiterNodes: number;
  /**
   * Text that only the create request of the lock's own node contains (for losing its reply):
   * `free` when nobody holds the lock, `contended` when the rival does (the semaphore's waiter
   * first queues, and creates its lease node only once a slot is free).
   */
  createMarker(path: string): { free: string; contended: string };
}

/** The node paths a lease holds. */
export function nodesHeld(lease: AnyLease): string[] {
  return 'leases' in lease ? lease.leases.map((l) => l.node) : [lease.node];
}

/** The sessions owning a lease's nodes. */
export function sessionsOf(lease: AnyLease): bigint[] {
  return 'leases' in lease ? lease.leases.map((l) => l.sessionId) : [lease.sessionId];
}

const queueKind = (name: string, make: (client: ZooKeeperClient, path: string, options: MakeOptions) => AnyLock): LockKind => ({
  name,
  make: (client, path, options = {}) => make(client, path, options),
  rival: (client, path) => make(client, path, {}),
  hasFailOnSessionExpiry: true,
  parents: (path) => [path],
  waiterNodes: 1,
  rivalWaiterNodes: 1,
  createMarker: (path) => ({ free: `${path}/_c_`, contended: `${path}/_c_` }),
});

/** The multi-lock's locks: the rival holds only the second, so a waiter takes the first and then waits. */
const multiPaths = (path: string): [string, string] => [joinPath(path, 'a'), joinPath(path, 'b')];

export const KINDS: readonly LockKind[] = [
  queueKind('Mutex', (client, path, options) => new Mutex(client, path, options)),
  queueKind('NonReentrantMutex', (client, path, options) => new NonReentrantMutex(client, path, options)),
  queueKind('WriteLock', (client, path, options) => new ReadWriteLock(client, path, options).writeLock),
  {
    ...queueKind('ReadLock', (client, path, options) => new ReadWriteLock(client, path, options).readLock),
    // Readers share: only a writer of the same path excludes a reader.
    rival: (client, path) => new ReadWriteLock(client, path).writeLock,
  },
  {
    name: 'Semaphore',
    make: (client, path, options = {}) => new Semaphore(client, path, 1, { safetyMargin: options.safetyMargin }),
    rival: (client, path) => new Semaphore(client, path, 1),
    hasFailOnSessionExpiry: false,
    parents: (path) => [joinPath(path, 'leases'), joinPath(path, 'locks')],
    // A waiter heads the queue under locks/ and watches leases/ for a free slot.
    waiterNodes: 1,
    rivalWaiterNodes: 1,
    createMarker: (path) => ({ free: `${path}/leases/_c_`, contended: `${path}/locks/_c_` }),
  },
  {
    name: 'SimpleLock',
    // The node one level down, so that its parent is this scenario's alone (the kinds of one behaviour run side by side).
    make: (client, path, options = {}) => new SimpleLock(client, simpleNode(path), { safetyMargin: options.safetyMargin }),
    rival: (client, path) => new SimpleLock(client, simpleNode(path)),
    hasFailOnSessionExpiry: false,
    parents: (path) => [path],
    isOurs: (path, child) => joinPath(path, child) === simpleNode(path),
    // A waiter only watches the node: it owns nothing while it waits.
    waiterNodes: 0,
    rivalWaiterNodes: 0,
    createMarker: (path) => ({ free: simpleNode(path), contended: simpleNode(path) }),
  },
  {
    name: 'MultiLock',
    make: (client, path, options = {}) => new MultiLock(multiPaths(path).map((p) => new Mutex(client, p, options))),
    rival: (client, path) => new Mutex(client, multiPaths(path)[1]),
    hasFailOnSessionExpiry: true,
    parents: multiPaths,
    // The first lock taken, and a place in the second's queue.
    waiterNodes: 2,
    rivalWaiterNodes: 1,
    createMarker: (path) => ({ free: `${multiPaths(path)[1]}/_c_`, contended: `${multiPaths(path)[1]}/_c_` }),
  },
];

/** Sorted child names of `path`, [] when it is gone. */
async function childrenOf(admin: ZooKeeperClient, path: string): Promise<string[]> {
  try {
    return (await admin.getChildren(path)).children.sort();
  } catch (error) {
    if (error instanceof ZooKeeperError && error.code === 'NONODE') return [];
    throw error;
  }
}

/** Every node of the lock at `path` that exists now (contenders, leases, queue places), as the admin sees them. */
export async function nodesOf(kind: LockKind, admin: ZooKeeperClient, path: string): Promise<string[]> {
  const nodes: string[] = [];
  for (const parent of kind.parents(path)) {
    for (const child of await childrenOf(admin, parent)) {
      if (kind.isOurs?.(path, child) ?? true) nodes.push(joinPath(parent, child));
    }
  }
  return nodes.sort();
}

/** The lock's nodes that `session` owns (ephemeral owner), as the admin sees them. */
export async function nodesOwnedBy(kind: LockKind, admin: ZooKeeperClient, path: string, session: bigint): Promise<string[]> {
  const owned: string[] = [];
  for (const node of await nodesOf(kind, admin, path)) {
    if ((await admin.exists(node))?.ephemeralOwner === session) owned.push(node);
  }
  return owned;
}

/** Creates the parents of the lock's nodes (persistent), so that a first create goes straight to the node. */
export async function prepare(kind: LockKind, admin: ZooKeeperClient, path: string): Promise<void> {
  for (const parent of kind.parents(path)) await admin.ensurePath(parent);
}

/** The child versions of the lock's parents: unchanged means no node was created (nor deleted) under them. */
export async function childVersions(kind: LockKind, admin: ZooKeeperClient, path: string): Promise<number[]> {
  return Promise.all(kind.parents(path).map(async (parent) => (await admin.exists(parent))?.cversion ?? -1));
}

/**
 * The paths `session` has a data watch on (getData, or exists on an existing node), as the
 * server lists them (`wchc`; it does not list child watches). Tells that a waiter is waiting.
 */
export async function dataWatchesOf(server: { fourLetterWord(word: string): Promise<string> }, session: bigint): Promise<string[]> {
  // A line `0x<session>` per session, then one `\t<path>` line per watch.
  const id = `0x${session.toString(16)}`;
  const paths: string[] = [];
  let current: string | undefined;
  for (const line of (await server.fourLetterWord('wchc')).split('\n')) {
    if (line.startsWith('0x')) current = line.trim();
    else if (current === id && line.trim().length > 0) paths.push(line.trim());
  }
  return paths;
}

/** A chunk that is only the client's heartbeat (length 8, xid -2, op 11): not a request of the recipe. */
function isPing(chunk: Buffer): boolean {
  return chunk.length === 12 && chunk.readInt32BE(4) === -2;
}

/**
 * Black-holes replies as soon as the first request whose bytes contain `marker` (without one,
 * the first request other than a ping) has gone upstream; resolves once it has. The connection
 * stays open (half-open), so the client learns nothing until its own liveness check or a reset.
 */
export async function blackholeRepliesAfter(proxy: FaultProxy, marker?: string, ms = 10_000): Promise<void> {
  let sent = false;
  const unsubscribe = proxy.onChunk((event) => {
    if (sent || event.direction !== 'upstream' || event.dropped) return;
    if (marker === undefined ? !isPing(event.chunk) : event.chunk.includes(marker)) {
      sent = true;
      proxy.blackhole('downstream');
    }
  });
  try {
    await eventually(() => sent, ms, marker === undefined ? 'a request sent' : `a request with "${marker}" sent`);
  } finally {
    unsubscribe();
  }
}

/** The simple lock's node in a scenario under `path`. */
function simpleNode(path: string): string {
  return joinPath(path, 'node');
}
