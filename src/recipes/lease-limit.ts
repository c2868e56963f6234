import type { ZooKeeperClient } from '../client/index.js';
import { ZooKeeperError } from '../client/index.js';
import type { Deadline } from './deadline.js';
import { LockError } from './lock-error.js';
import { awaitSession } from './reconnect.js';
import { isTransient } from './transient.js';

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
 */
export async function verifyLeaseLimit(client: ZooKeeperClient, path: string, maxLeases: number, session: bigint, deadline: Deadline, ours: Promise<number>): Promise<void> {
  const signal = deadline.requestSignal;
  for (;;) {
    deadline.check();
    try {
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
      // Written meanwhile (or our own write whose reply was lost): read again.
      if (error.code === 'BADVERSION') continue;
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
  const foreign = children.filter((child) => !SEMAPHORE_CHILDREN.has(child));
  if (foreign.length === 0) return;
  const shown = foreign.slice(0, 3).join(', ') + (foreign.length > 3 ? `, … (${foreign.length})` : '');
  throw new LockError(
    'FOREIGN_SEMAPHORE',
    `${path} has children a zklock semaphore does not make (${shown}): kazoo's Semaphore keeps its leases there, and the two would each count only their own holders; use another path`,
    { path, op: 'acquire' },
  );
}

/** The recorded limit; undefined when nothing is recorded; 'foreign' for data that is not a limit. */
function parseLimit(data: Buffer): number | undefined | 'foreign' {
  if (data.length === 0) return undefined;
  const text = data.toString('utf8');
  return /^[1-9]\d{0,9}$/.test(text) ? Number(text) : 'foreign';
}
