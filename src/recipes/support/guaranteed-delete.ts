import type { ZooKeeperClient } from '../../client/index.js';
import { MultiError, ZooKeeperError } from '../../client/index.js';
import { pauseAfterOverload } from './transient.js';

export type DeleteOptions =
  /**
   * Delete only if the node is still the one created at this zxid (for names others may reuse):
   * read, then deleted at the version read, and not at all once `gone()` says the owner heard
   * our node deleted (its watch) — a namesake may stand there by then, unseen by the read.
   */
  | { czxid?: bigint; gone?: () => boolean; record?: never }
  /**
   * Also set `path`'s data, in the delete's transaction, if it is still at `version` (see
   * release-record.ts); `refused` hears when the server denies us writing there.
   */
  | { czxid?: never; gone?: never; record?: { path: string; data: Buffer; version: number; refused?: () => void } };

/** How a guaranteed delete ended: our request deleted the node, the server said it was already gone, or the session ended first. */
type DeleteOutcome = 'deleted' | 'missing' | 'ended';

/**
 * Deletes an ephemeral node of session `owner`, retrying across reconnects until it is gone.
 * It also ends when the session is gone (the server deletes the node with it) or the client
 * closes (which ends the session). Never bound to a caller's signal: a leaked contender would
 * block the lock for the rest of the session.
 *
 * Resolves 'deleted' or 'missing' when the server answered that the node is gone ('missing': it was
 * before our request ran, someone else deleted it, or a reply of ours was lost), 'ended' when
 * the session ended first (the node goes with it, but we cannot say when).
 */
export async function deleteGuaranteed(client: ZooKeeperClient, path: string, owner: bigint, options: DeleteOptions = {}): Promise<DeleteOutcome> {
  let { record } = options;
  const { czxid, gone } = options;
  for (;;) {
    if (client.sessionId !== owner || client.state === 'closed') return 'ended';
    try {
      if (record) {
        await client.multi([
          { op: 'setData', path: record.path, data: record.data, version: record.version },
          { op: 'delete', path },
        ]);
        return 'deleted';
      }
      if (czxid === undefined) {
        await client.delete(path);
        return 'deleted';
      }
      // A node of a well-known name: delete it only if it is still the one we created.
      const stat = await client.exists(path);
      // The read's answer may be late: the owner's watch may have heard of a deletion since.
      if (stat?.czxid !== czxid || gone?.()) return 'missing';
      // A node that is born at version 1 (SimpleLock's) is never at the version 0 of a namesake
      // made by a plain create meanwhile: this delete refuses that one (BADVERSION, read again).
      await client.delete(path, { version: stat.version });
      return 'deleted';
    } catch (error) {
      if (!(error instanceof ZooKeeperError)) throw error;
      if (record && error instanceof MultiError && error.failedIndex === 0) {
        // The record was refused (someone wrote the lock path since we read it, or we may not
        // write there): the delete must not be.
        if (error.code === 'NOAUTH') record.refused?.();
        record = undefined;
        continue;
      }
      switch (error.code) {
        case 'NONODE':
          return 'missing';
        case 'BADVERSION':
          // Only the czxid-checked delete names a version: our node was written since we read it
          // and is still there. Read it again (this repeats only while others keep writing it).
          break;
        case 'SESSIONEXPIRED':
        case 'CLOSED':
          return 'ended';
        case 'OVERLOADED':
          // Not sent: once the client's queue has room again. The loop's checks end it with the session.
          await pauseAfterOverload(client, owner);
          break;
        case 'CONNECTIONLOSS':
        case 'TIMEOUT':
          // Until connected again or the session is over; whatever ends the wait, the loop's checks decide.
          await client.waitForConnected({ session: owner }).catch(() => undefined);
          break;
        default:
          throw error;
      }
    }
  }
}
