/** What a queue lock remembers of the last node it held exclusively and saw deleted. */
export interface ReleasedContender {
  seq: number;
  czxid: bigint;
  /** Not deleted by its holder's release — by our client's forced release (a hold limit, see hold-limit.ts) or by someone else: not a clean handoff (see lock-delay.ts). */
  forced?: boolean;
}

/**
 * True when the node created as `created` must be the only contender, so it holds the lock
 * without listing the queue.
 *
 * The server names a sequential child with the parent's count of child creates (deletes do not
 * advance it; the client-visible cversion counts both). Given a node `prev` of ours that held the
 * lock exclusively and whose deletion was confirmed before `created` was sent:
 * - `created.seq === prev.seq + 1` means no child was created between the two. Any contender
 *   alive at our create was then created before `prev`, so it was ahead of `prev` and gone
 *   when `prev` held — and a gone node does not come back.
 * - That needs one parent. An empty container parent can be reaped and re-created, with a fresh
 *   count, in between. Reaching our sequence in the new parent takes the reap, the re-create
 *   and `created.seq` creates before ours, plus `prev`'s deletion: at least `created.seq + 3`
 *   transactions between the two creates, each its own zxid. Fewer rule it out.
 *
 * The zxid count assumes one transaction per create: a `multi` that creates the lock path, or
 * several children of it, in one transaction could defeat it. No lock recipe does that; like
 * deleting a holder's node by hand, it is outside the protocol every contender follows.
 */
export function provenSole(prev: ReleasedContender, created: ReleasedContender): boolean {
  if (((created.seq - prev.seq) | 0) !== 1) return false;
  return created.czxid - prev.czxid < BigInt(created.seq >>> 0) + 4n;
}
