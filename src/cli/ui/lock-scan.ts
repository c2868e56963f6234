import type { LockState, ZooKeeperClient } from '../../index.js';
import { ZooKeeperError, inspectLock, joinPath, parentOf, parseContender } from '../../index.js';
// Not in the package's API: the simple lock's own participants() reads it; here it reads any ephemeral leaf.
import { KAZOO_LEASE_NAME, kazooSemaphoreLock, simpleLockState } from '../../recipes/inspect.js';
import { SEMAPHORE_PARTS, isSemaphore } from '../semaphore-layout.js';

/** The kinds of lock the page tells apart (the tracing channels' LockKind names other things). */
export type ShownKind = 'mutex' | 'read/write' | 'semaphore' | 'simple';

/** A lock as read now; `undefined` from {@link classify} when the path holds no lock. */
export interface ScannedLock {
  state: LockState;
  kind: ShownKind;
}

/** Names only read/write locks use (Curator's, zklock's and kazoo's readers; Curator's and zklock's writers). */
const READ_WRITE_NAME = /__(?:READ|WRIT|rlock)__/;

/** What kazoo appends to a semaphore's path for the lock its waiters queue in. */
const KAZOO_LOCK_SUFFIX = kazooSemaphoreLock('');

function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

function queueKind(state: LockState): ShownKind {
  return [...state.holders, ...state.waiters].some((c) => c.kind === 'shared' || READ_WRITE_NAME.test(c.name)) ? 'read/write' : 'mutex';
}

/**
 * The path `path` is a part of if that path is a semaphore: `<x>` for `<x>/leases`, `<x>/locks`
 * and the nodes in them; for kazoo's, `<x>` for its leases `<x>/<hex>`, its lock `<x>-__lock__`
 * and the nodes in that. Only a name, not yet a semaphore: `<x>` may be a plain folder with a
 * `locks` folder of locks in it (`/` in the README's layout). Never above `root`.
 */
function semaphoreOwner(path: string, root: string): string | undefined {
  if (path === root) return undefined;
  if (SEMAPHORE_PARTS.has(baseName(path))) return parentOf(path);
  const parent = parentOf(path);
  // kazoo's: a lease node under it, its kazoo Lock beside it, a waiter in that lock.
  if (KAZOO_LEASE_NAME.test(baseName(path))) return parent;
  const besideOf = (p: string): string | undefined => (p !== root && p.endsWith(KAZOO_LOCK_SUFFIX) ? p.slice(0, -KAZOO_LOCK_SUFFIX.length) : undefined);
  const beside = besideOf(path) ?? besideOf(parent);
  if (beside !== undefined) return beside;
  return parent !== root && SEMAPHORE_PARTS.has(baseName(parent)) ? parentOf(parent) : undefined;
}

/**
 * Where a change at `path` (a watch event) may have changed a lock: the node itself (a simple
 * lock, a lock node made or removed), its parent (a contender came or went) and, for a node
 * that may be a semaphore's part, the semaphore it may belong to. Never above `root`. Whether
 * that is a semaphore is for {@link classify} to read.
 */
export function affectedPaths(path: string, root: string): string[] {
  const within = (p: string): boolean => p === root || p.startsWith(root === '/' ? '/' : `${root}/`);
  const parent = path === '/' ? path : parentOf(path);
  const owner = semaphoreOwner(path, root);
  return [path, parent, ...(owner === undefined ? [] : [owner])].filter((p, i, all) => within(p) && all.indexOf(p) === i);
}

/**
 * Whether each path is a semaphore, read once per pass however many of its parts changed: a
 * burst of a thousand leases costs one look at the semaphore, not a thousand.
 */
export class SemaphoreCheck {
  private readonly seen = new Map<string, Promise<boolean>>();

  constructor(
    private readonly client: ZooKeeperClient,
    readonly root: string,
  ) {}

  /** `path` is a semaphore's `leases/` or `locks/` or a node in one: no lock of its own. */
  async isPart(path: string): Promise<boolean> {
    const owner = semaphoreOwner(path, this.root);
    if (owner === undefined) return false;
    let answer = this.seen.get(owner);
    if (!answer) {
      answer = this.client.getChildren(owner).then(
        (r) => isSemaphore(this.client, owner, r.children),
        (error: unknown) => {
          if (error instanceof ZooKeeperError && error.code === 'NONODE') return false;
          throw error;
        },
      );
      this.seen.set(owner, answer);
    }
    return answer;
  }
}

/**
 * What `path` holds: a queue lock (contender children, zklock/Curator/kazoo names), a semaphore
 * (see {@link isSemaphore}), a simple lock (an ephemeral leaf that is no contender), or
 * nothing (undefined, also when the node is gone or is a part of a semaphore, which `parts`
 * tells). `known` is the kind it had: a queue lock whose last contender left stays a lock
 * (free) rather than vanishing from view.
 */
export async function classify(client: ZooKeeperClient, path: string, parts: SemaphoreCheck, known?: ShownKind): Promise<ScannedLock | undefined> {
  // A lease is an ephemeral leaf and a semaphore's locks/ holds contenders: neither is a lock of its own.
  if (await parts.isPart(path)) return undefined;
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

async function classifyListing(client: ZooKeeperClient, path: string, children: string[], ephemeral: boolean, known?: ShownKind): Promise<ScannedLock | undefined> {
  const name = baseName(path);
  try {
    if (await isSemaphore(client, path, children)) return { state: await inspectLock(client, path, { kind: 'semaphore' }), kind: 'semaphore' };
    if (children.some((c) => parseContender(c) !== undefined) || (known && known !== 'simple' && children.length === 0)) {
      const state = await inspectLock(client, path, { kind: 'queue' });
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
export async function scanTree(
  client: ZooKeeperClient,
  root: string,
  maxNodes: number,
): Promise<{ locks: Map<string, ScannedLock>; truncated: boolean; unreadable: Set<string>; rootMissing: boolean }> {
  const locks = new Map<string, ScannedLock>();
  const unreadable = new Set<string>();
  let rootMissing = false;
  let level = [root];
  let visited = 0;
  while (level.length > 0) {
    const next: string[] = [];
    for (let i = 0; i < level.length; i += SCAN_PARALLELISM) {
      const batch = level.slice(i, i + SCAN_PARALLELISM);
      if ((visited += batch.length) > maxNodes) return { locks, truncated: true, unreadable, rootMissing };
      await Promise.all(
        batch.map(async (path) => {
          let listing;
          let lock;
          try {
            listing = await client.getChildren(path);
            lock = await classifyListing(client, path, listing.children, listing.stat.ephemeralOwner !== 0n);
          } catch (error) {
            if (error instanceof ZooKeeperError && error.code === 'NONODE') {
              rootMissing ||= path === root;
              return; // deleted while we walked, or the root not made yet
            }
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
  return { locks, truncated: false, unreadable, rootMissing };
}
