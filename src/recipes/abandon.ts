import type { ZooKeeperClient } from '../client/index.js';
import { deleteGuaranteed } from './guaranteed-delete.js';
import { isOverloaded, isTransient, pauseAfterOverload } from './transient.js';

/** The node a create whose outcome we never learned left behind. */
export interface AbandonedNode {
  path: string;
  /** For a name others may reuse: delete only the node created at this zxid. */
  czxid?: bigint;
}

/**
 * Deletes the node of a create whose outcome we never learned, if it exists, retried across
 * reconnects until done or session `session` is gone: a leaked node would block the lock for the
 * rest of the session. `find` looks for the node; it runs after a sync of `near`, so a server
 * that has not seen the create yet cannot hide it. While connected the caller's rejection waits
 * for this (briefly); waiting for a reconnect would defeat the caller's deadline.
 */
export async function abandon(client: ZooKeeperClient, session: bigint, near: string, find: () => Promise<AbandonedNode | undefined>): Promise<void> {
  const cleanup = removeAbandoned(client, session, near, find).catch(() => undefined);
  if (client.state !== 'connected') return;
  // A connection that looks fine may be half-open: wait for a few round trips, not for its detection.
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.min(1000, client.sessionTimeout / 4))));
  await Promise.race([cleanup, bound]);
  clearTimeout(timer);
}

async function removeAbandoned(client: ZooKeeperClient, session: bigint, near: string, find: () => Promise<AbandonedNode | undefined>): Promise<void> {
  for (;;) {
    if (client.state === 'closed' || client.sessionId !== session) return;
    try {
      await client.sync(near);
      const node = await find();
      if (node) await deleteGuaranteed(client, node.path, session, node.czxid === undefined ? {} : { czxid: node.czxid });
      return;
    } catch (error) {
      if (isOverloaded(error)) {
        await pauseAfterOverload(client, session);
        continue;
      }
      if (!isTransient(error)) return;
      // Until connected again or the session is over; whatever ends the wait, the loop's checks decide.
      await client.waitForConnected({ session }).catch(() => undefined);
    }
  }
}
