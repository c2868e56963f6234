import type { LockState, ZooKeeperClient } from '../index.js';
import { ZooKeeperError, inspectLock, joinPath } from '../index.js';
import { isKazooLeases, kazooSemaphoreLock } from '../recipes/inspect.js';
import { isContenderNode } from './contender-names.js';

/** A semaphore keeps its contenders one level down, in these children (Curator's InterProcessSemaphoreV2 layout). */
export const SEMAPHORE_PARTS: ReadonlySet<string> = new Set(['leases', 'locks']);

/**
 * kazoo's semaphore holds its lease nodes (32 hex digits) and nothing else, and queues its
 * waiters in a kazoo Lock beside it (`<path>-__lock__`): a free one is an empty path beside
 * that lock. Curator's (and zklock's) semaphore path holds its `leases/` and `locks/` and nothing else, and they hold only
 * contender nodes. Any `locks` child is not enough: `/` with a `/locks` folder of lock paths (the
 * README's own layout) would be taken for a semaphore and never walked. Nor is an empty `locks`
 * alone (a user's `ensurePath('/locks')` before any lock): only a semaphore makes `leases`, so
 * without it one contender node must show that this is one. `children` is `path`'s listing.
 */
export async function isSemaphore(client: ZooKeeperClient, path: string, children: readonly string[], signal?: AbortSignal): Promise<boolean> {
  // kazoo's: its leases directly under the path, or none and its kazoo Lock beside it.
  if (isKazooLeases(children)) return true;
  if (children.length === 0) return path !== '/' && (await client.exists(kazooSemaphoreLock(path), { signal })) !== null;
  if (!children.every((c) => SEMAPHORE_PARTS.has(c))) return false;
  let contenders = 0;
  for (const child of children) {
    const inside = await client.getChildren(joinPath(path, child), { signal }).then(
      (r) => r.children,
      (error: unknown) => {
        if (error instanceof ZooKeeperError && error.code === 'NONODE') return [];
        throw error;
      },
    );
    if (!inside.every(isContenderNode)) return false;
    contenders += inside.length;
  }
  return children.includes('leases') || contenders > 0;
}

/** What kind of lock `path` is by the rule above, for inspectLock: NONODE when it does not exist. */
async function lockLayoutAt(client: ZooKeeperClient, path: string): Promise<LockState['kind']> {
  const { children } = await client.getChildren(path);
  return (await isSemaphore(client, path, children)) ? 'semaphore' : 'queue';
}

/** The lock at `path`, read as the kind the rule above says it is (for commands given only a path): NONODE when it does not exist. */
export async function inspectLockAt(client: ZooKeeperClient, path: string): Promise<LockState> {
  return inspectLock(client, path, { kind: await lockLayoutAt(client, path) });
}
