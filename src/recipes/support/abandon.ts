import type { ZooKeeperClient } from '../../client/index.js';
import type { Deadline } from './deadline.js';
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
 * that has not seen the create yet cannot hide it. The caller's rejection waits for this only
 * briefly (see awaitBriefly).
 */
export async function abandon(client: ZooKeeperClient, session: bigint, near: string, find: () => Promise<AbandonedNode | undefined>): Promise<void> {
  await awaitBriefly(client, removeAbandoned(client, session, near, find).catch(() => undefined));
}

/**
 * Deletes a node of ours that an acquire no longer wants (it failed, or its deadline passed),
 * like deleteGuaranteed, waiting for the delete until the caller's deadline and, once that has
 * passed, only briefly (see awaitBriefly): the delete goes on in the background until done or the
 * session is gone, and the node with it.
 */
export async function giveUpNode(client: ZooKeeperClient, path: string, owner: bigint, deadline: Deadline): Promise<void> {
  await giveUp(client, deleteGuaranteed(client, path, owner), deadline);
}

/** Waits for a give-up path's `cleanup` as giveUpNode says; a failure heard meanwhile is thrown. */
export async function giveUp(client: ZooKeeperClient, cleanup: Promise<unknown>, deadline: Deadline): Promise<void> {
  cleanup.catch(() => undefined);
  if (!deadline.expired) {
    try {
      await deadline.race(cleanup);
      return;
    } catch (error) {
      if (!deadline.expired) throw error;
    }
  }
  await awaitBriefly(client, cleanup);
}

/**
 * How long a give-up path waits for its clean-up (`cleanup` goes on regardless): not at all when
 * not connected, since waiting for a reconnect or the session's end would defeat the caller's
 * deadline (the ephemeral node goes with the session anyway); while connected, until done or
 * for a few round trips' worth, since a connection that looks fine may be half-open and its
 * detection takes two thirds of the session timeout. A failure of `cleanup` within that time is
 * thrown; a later one goes unheard.
 */
export async function awaitBriefly(client: ZooKeeperClient, cleanup: Promise<unknown>): Promise<void> {
  cleanup.catch(() => undefined);
  if (client.state !== 'connected') return;
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.min(1000, client.sessionTimeout / 4))));
  try {
    await Promise.race([cleanup, bound]);
  } finally {
    clearTimeout(timer);
  }
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
