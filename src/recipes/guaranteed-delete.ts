import type { Op, ZooKeeperClient } from '../client/index.js';
import { MultiError, ZooKeeperError } from '../client/index.js';
import { RELEASE_MARKER } from './release-marker.js';
import { pauseAfterOverload } from './transient.js';

export type DeleteOptions =
  /** Delete only if the node is still the one created at this zxid (for names others may reuse). */
  | { czxid?: bigint; record?: never; markerOver?: never }
  | {
      czxid?: never;
      /**
       * Also set `path`'s data, in the delete's transaction, if it is still at `version` (see
       * release-record.ts); `refused` hears when the server denies us writing there.
       */
      record?: { path: string; data: Buffer; version: number; refused?: () => void } | undefined;
      /**
       * Write the release marker into the node at this data version, then delete it at the next,
       * in one transaction (see release-marker.ts). A refused marker falls back to a plain delete.
       */
      markerOver?: number | undefined;
    };

/**
 * Deletes an ephemeral node of session `owner`, retrying across reconnects until it is gone.
 * It also ends when the session is gone (the server deletes the node with it) or the client
 * closes (which ends the session). Never bound to a caller's signal: a leaked contender would
 * block the lock for the rest of the session.
 *
 * Resolves true when the server answered that the node is gone, false when the session ended
 * first (the node goes with it, but we cannot say when).
 */
export async function deleteGuaranteed(client: ZooKeeperClient, path: string, owner: bigint, options: DeleteOptions = {}): Promise<boolean> {
  let { record, markerOver } = options;
  const { czxid } = options;
  for (;;) {
    if (client.sessionId !== owner || client.state === 'closed') return false;
    try {
      if (record || markerOver !== undefined) {
        const ops: Op[] = record ? [{ op: 'setData', path: record.path, data: record.data, version: record.version }] : [];
        if (markerOver === undefined) ops.push({ op: 'delete', path });
        else ops.push({ op: 'setData', path, data: RELEASE_MARKER, version: markerOver }, { op: 'delete', path, version: markerOver + 1 });
        await client.multi(ops);
        return true;
      }
      if (czxid === undefined) {
        await client.delete(path);
        return true;
      }
      // A node of a well-known name: delete it only if it is still the one we created.
      const stat = await client.exists(path);
      if (stat?.czxid === czxid) await client.delete(path, { version: stat.version });
      return true;
    } catch (error) {
      if (!(error instanceof ZooKeeperError)) throw error;
      if (record && error instanceof MultiError && error.failedIndex === 0) {
        // The record was refused (someone wrote the lock path since we read it, or we may not
        // write there): the delete must not be.
        if (error.code === 'NOAUTH') record.refused?.();
        record = undefined;
        continue;
      }
      if (markerOver !== undefined && error instanceof MultiError && error.code !== 'NONODE') {
        // Our node was written by someone (BADVERSION) or we may not write it: release it plainly.
        // (Not the record: a transaction that fails at the record fails there, before our node.)
        markerOver = undefined;
        continue;
      }
      switch (error.code) {
        case 'NONODE':
          return true;
        case 'BADVERSION':
          // Only the czxid-checked delete names a version: our node was written since we read it
          // and is still there. Read it again (this repeats only while others keep writing it).
          break;
        case 'SESSIONEXPIRED':
        case 'CLOSED':
          return false;
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
