import type { LockState, ZooKeeperClient } from '../../index.js';
import { ZooKeeperError, inspectLock, joinPath, parentOf, parseContender } from '../../index.js';
// Not in the package's API: the simple lock's own participants() reads it; here it reads any ephemeral leaf.
import { simpleLockState } from '../../recipes/inspect.js';

export type LockKind = 'mutex' | 'read/write' | 'semaphore' | 'simple';

/** A lock as read now; `undefined` from {@link classify} when the path holds no lock. */
export interface ScannedLock {
  state: LockState;
  kind: LockKind;
}

/** A semaphore keeps its contenders one level down, in these children (Curator's InterProcessSemaphoreV2 layout). */
const SEMAPHORE_PARTS = new Set(['leases', 'locks']);

/** Names only read/write locks use (Curator's, zklock's and kazoo's readers; Curator's and zklock's writers). */
const READ_WRITE_NAME = /__(?:READ|WRIT|rlock)__/;

function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

function queueKind(state: LockState): LockKind {
  return [...state.holders, ...state.waiters].some((c) => c.kind === 'shared' || READ_WRITE_NAME.test(c.name)) ? 'read/write' : 'mutex';
}

/**
 * Where a change at `path` (a watch event) may have changed a lock: the node itself (a simple
 * lock, a lock node made or removed), its parent (a contender came or went) and, for a
 * semaphore's lease or queue node, the semaphore two levels up. Never above `root`.
 */
export function affectedPaths(path: string, root: string): string[] {
  const within = (p: string): boolean => p === root || p.startsWith(root === '/' ? '/' : `${root}/`);
  const parent = path === '/' ? path : parentOf(path);
  // A lease or queue node of a semaphore changes the semaphore alone (a lease is an ephemeral leaf, not a simple lock).
  const candidates = SEMAPHORE_PARTS.has(baseName(parent)) && parent !== root ? [parentOf(parent)] : [path, parent];
  // A semaphore's own leases/ and locks/ nodes are parts of the semaphore, never locks themselves.
  return candidates.filter((p) => within(p) && !(p !== root && SEMAPHORE_PARTS.has(baseName(p)))).filter((p, i, all) => all.indexOf(p) === i);
}

/**
 * What `path` holds: a queue lock (contender children, zklock/Curator/kazoo names), a semaphore
 * (leases/ or locks/ children), a simple lock (an ephemeral leaf that is no contender), or
 * nothing (undefined, also when the node is gone). `known` is the kind it had: a queue lock
 * whose last contender left stays a lock (free) rather than vanishing from view.
 */
export async function classify(client: ZooKeeperClient, path: string, known?: LockKind): Promise<ScannedLock | undefined> {
  let children: string[];
  let ephemeral: boolean;
  try {
    const listing = await client.getChildren(path);
    children = listing.children;
    ephemeral = listing.stat.ephemeralOwner !== 0n;
  } catch (error) {
    if (error instanceof ZooKeeperError && error.code === 'NONODE') return undefined;
    throw error;
  }
  return classifyListing(client, path, children, ephemeral, known);
}

async function classifyListing(client: ZooKeeperClient, path: string, children: string[], ephemeral: boolean, known?: LockKind): Promise<ScannedLock | undefined> {
  const name = baseName(path);
  try {
    if (children.some((c) => SEMAPHORE_PARTS.has(c))) return { state: await inspectLock(client, path), kind: 'semaphore' };
    if (children.some((c) => parseContender(c) !== undefined) || (known && known !== 'simple' && children.length === 0)) {
      const state = await inspectLock(client, path);
      // A free lock keeps the kind it was seen with: its empty queue no longer tells.
      return { state, kind: state.holders.length + state.waiters.length === 0 && known ? known : queueKind(state) };
    }
    if (ephemeral && children.length === 0 && parseContender(name) === undefined) return { state: await simpleLockState(client, path), kind: 'simple' };
  } catch (error) {
    // Gone between the listing and the reads: no lock here now.
    if (error instanceof ZooKeeperError && error.code === 'NONODE') return undefined;
    throw error;
  }
  return undefined;
}

/** How many reads a scan keeps in flight: enough to hide round trips, few enough not to crowd a session out. */
export const SCAN_PARALLELISM = 64;

/**
 * An error about one znode, not the session: one our credentials may not read (its ACL). Others
 * (connection loss, expiry) fail the whole read, which is done again once the session is back.
 */
export function unreadableHere(error: unknown): boolean {
  return error instanceof ZooKeeperError && error.code === 'NOAUTH';
}

/** `fn` over `items`, at most `limit` at a time; settled results in the items' order. */
export async function settleBounded<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<PromiseSettledResult<R>[]> {
  const results: PromiseSettledResult<R>[] = [];
  for (let i = 0; i < items.length; i += limit) results.push(...(await Promise.allSettled(items.slice(i, i + limit).map(fn))));
  return results;
}

/**
 * Every lock under `root`, breadth-first, level by level with reads in parallel. Locks' own
 * children are not walked (they are the lock's contenders). Stops after `maxNodes` znodes and
 * says so in `truncated`. A znode we may not read is skipped and named in `unreadable`: one
 * ACL'd subtree must not hide every other lock.
 */
export async function scanTree(client: ZooKeeperClient, root: string, maxNodes: number): Promise<{ locks: Map<string, ScannedLock>; truncated: boolean; unreadable: Set<string> }> {
  const locks = new Map<string, ScannedLock>();
  const unreadable = new Set<string>();
  let level = [root];
  let visited = 0;
  while (level.length > 0) {
    const next: string[] = [];
    for (let i = 0; i < level.length; i += SCAN_PARALLELISM) {
      const batch = level.slice(i, i + SCAN_PARALLELISM);
      if ((visited += batch.length) > maxNodes) return { locks, truncated: true, unreadable };
      await Promise.all(
        batch.map(async (path) => {
          let listing;
          let lock;
          try {
            listing = await client.getChildren(path);
            lock = await classifyListing(client, path, listing.children, listing.stat.ephemeralOwner !== 0n);
          } catch (error) {
            if (error instanceof ZooKeeperError && error.code === 'NONODE') return; // deleted while we walked
            if (!unreadableHere(error)) throw error;
            unreadable.add(path);
            return;
          }
          if (lock) {
            locks.set(path, lock);
            return;
          }
          for (const child of listing.children) {
            const childPath = joinPath(path, child);
            if (childPath !== '/zookeeper') next.push(childPath);
          }
        }),
      );
    }
    level = next;
  }
  return { locks, truncated: false, unreadable };
}
