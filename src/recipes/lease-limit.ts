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
 */
export async function verifyLeaseLimit(client: ZooKeeperClient, path: string, maxLeases: number, session: bigint, deadline: Deadline): Promise<void> {
  const signal = deadline.requestSignal;
  for (;;) {
    deadline.check();
    try {
      const { data, stat } = await deadline.race(client.getData(path, { signal }));
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

/** The recorded limit; undefined when nothing is recorded; 'foreign' for data that is not a limit. */
function parseLimit(data: Buffer): number | undefined | 'foreign' {
  if (data.length === 0) return undefined;
  const text = data.toString('utf8');
  return /^[1-9]\d{0,9}$/.test(text) ? Number(text) : 'foreign';
}
