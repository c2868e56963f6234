import type { ZooKeeperClient } from '../../client/index.js';
import { ZooKeeperError } from '../../client/index.js';
import type { Layout } from '../queue/contender-name.js';
import type { Deadline } from '../support/deadline.js';
import { LockError } from '../support/lock-error.js';
import { awaitSession } from '../support/reconnect.js';
import { isTransient } from '../support/transient.js';

/**
 * A semaphore's limit, recorded where kazoo records its own: the semaphore path's data, as
 * decimal text. Curator's InterProcessSemaphoreV2 neither reads nor writes that data (its nodes
 * live under `locks/` and `leases/`; zklock's release records go into `locks/`), so the record
 * costs Curator nothing and protects zklock contenders from one another.
 *
 * Only the head of the semaphore's queue calls this, right before it counts the leases: the
 * limit is checked by whoever is about to take a lease, at that moment, not once per object.
 * Empty data (a path made by Curator, by an older zklock, or just now by our queue) gets our
 * limit, at the version read, so two first contenders with different limits cannot both win:
 * the loser reads the winner's limit and fails. Data that is not a number is someone else's:
 * left alone, and nothing is checked. No write permission: nothing is recorded.
 *
 * The same read tells a path that kazoo's Semaphore uses: its leases are the path's own children
 * (named by a uuid), its lock is `<path>-__lock__`, and it counts every child of the path as a
 * lease, so each side would count only its own holders (both record the same limit text, so the
 * limit cannot tell them apart). Our layout has `locks` (our queue node is in it) and `leases`
 * when the head's count of the leases found it: `ours` says how many of the two the count saw
 * (pipelined behind this read; Infinity once nobody waits for the check). More children than
 * that, and the path is listed (a request only then): any other child fails the acquire with
 * FOREIGN_SEMAPHORE before we take a lease.
 *
 * `makePath` (kazoo's layout, whose queue lives beside the path, not in it): a missing path is
 * made here, persistent as kazoo's own, with our limit as its data, as kazoo's Semaphore makes it.
 */
export async function verifyLeaseLimit(
  client: ZooKeeperClient,
  path: string,
  maxLeases: number,
  session: bigint,
  deadline: Deadline,
  ours: Promise<number>,
  makePath = false,
): Promise<void> {
  const signal = deadline.requestSignal;
  /** The path was missing at our last read: make it (once; then read again if someone was first). */
  let make = false;
  for (;;) {
    deadline.check();
    try {
      if (make) {
        await deadline.race(client.create(path, Buffer.from(String(maxLeases)), { mode: 'PERSISTENT', signal }));
        return;
      }
      const { data, stat } = await deadline.race(client.getData(path, { signal }));
      if (stat.numChildren > 1 && stat.numChildren > (await ours)) await refuseForeign(client, path, deadline);
      const recorded = parseLimit(data);
      if (recorded === 'foreign') return;
      if (recorded === undefined) {
        await deadline.race(client.setData(path, Buffer.from(String(maxLeases)), { version: stat.version, signal }));
        return;
      }
      if (recorded !== maxLeases) {
        throw new LockError('LEASE_LIMIT_MISMATCH', `this semaphore allows ${maxLeases} leases, but ${path} records ${recorded}: every contender must use the same limit`, {
          path,
          op: 'acquire',
        });
      }
      return;
    } catch (error) {
      if (!(error instanceof ZooKeeperError)) throw error;
      // Written meanwhile (or our own write whose reply was lost), or made meanwhile: read again.
      if (error.code === 'BADVERSION' || error.code === 'NODEEXISTS') {
        make = false;
        continue;
      }
      // Missing: made here once with makePath (a NONODE of the create itself: its parent went, nothing to record).
      if (error.code === 'NONODE' && makePath && !make) {
        make = true;
        continue;
      }
      if (error.code === 'NONODE' || error.code === 'NOAUTH') return;
      if (!isTransient(error)) throw error;
      await awaitSession(client, session, deadline);
    }
  }
}

/** The children of a semaphore path in zklock's (and Curator's InterProcessSemaphoreV2) layout. */
const SEMAPHORE_CHILDREN: ReadonlySet<string> = new Set(['locks', 'leases']);

/** FOREIGN_SEMAPHORE when `path` has a child our layout does not make (a kazoo Semaphore's lease). */
async function refuseForeign(client: ZooKeeperClient, path: string, deadline: Deadline): Promise<void> {
  const { children } = await deadline.race(client.getChildren(path, { signal: deadline.requestSignal }));
  refuseLayout(path, 'curator', children);
}

/**
 * FOREIGN_SEMAPHORE when the children of a semaphore's `path` show the other layout: for
 * Curator's, a child other than `locks` and `leases` (a kazoo lease); for kazoo's, whose leases
 * are the path's children, a `locks` or `leases` folder (zklock's or Curator's semaphore).
 */
export function refuseLayout(path: string, layout: Layout, children: readonly string[]): void {
  const foreign = children.filter((child) => SEMAPHORE_CHILDREN.has(child) === (layout === 'kazoo'));
  if (foreign.length === 0) return;
  const shown = foreign.slice(0, 3).join(', ') + (foreign.length > 3 ? `, … (${foreign.length})` : '');
  const other = layout === 'kazoo' ? "a semaphore in Curator's layout (zklock's default, Curator's InterProcessSemaphoreV2)" : "kazoo's Semaphore (or zklock's with layout: 'kazoo')";
  throw new LockError(
    'FOREIGN_SEMAPHORE',
    `${path} has children a ${layout}-layout semaphore does not make (${shown}): ${other} uses this path, and the two would each count only their own holders; use one layout per path`,
    { path, op: 'acquire' },
  );
}

/** The recorded limit; undefined when nothing is recorded; 'foreign' for data that is not a limit. */
function parseLimit(data: Buffer): number | undefined | 'foreign' {
  if (data.length === 0) return undefined;
  const text = data.toString('utf8');
  return /^[1-9]\d{0,9}$/.test(text) ? Number(text) : 'foreign';
}
