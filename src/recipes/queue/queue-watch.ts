import type { ZooKeeperClient } from '../../client/index.js';
import { ZooKeeperError, joinPath } from '../../client/index.js';
import type { Contender, ContenderKind } from './contender-name.js';
import { blocks, compareSeq, sortContenders } from './contender-name.js';
import type { Deadline } from '../support/deadline.js';
import { isDowngraded } from '../support/owner-data.js';
import type { EachRead } from '../support/read-each.js';
import { readEach } from '../support/read-each.js';
import { awaitSession } from '../support/reconnect.js';
import { isTransient } from '../support/transient.js';

/** What a waiter in a queue needs to watch and read the contenders ahead of it. */
export interface QueueWait {
  client: ZooKeeperClient;
  lockPath: string;
  kind: ContenderKind;
  deadline: Deadline;
}

/** The session our node belonged to has ended: the node is gone with it. */
export class SessionLost extends Error {}

/** Past this many candidates one listing is cheaper for the server than reading each of them. */
export const LIST_INSTEAD_OF_READ = 16;

/**
 * The contenders that block a waiter, nearest first, as far as it keeps them: all of them up to
 * KEPT_AHEAD, else only the nearest. A waiter far back does not keep the listing of everyone
 * ahead of it (that made one process's heap grow with the square of a long queue): when its
 * nearest goes, a release record usually answers (fast/release-record.ts), else a check lists the
 * queue again, which is all it did for so many anyway (presentBlockers).
 */
export interface Blockers {
  /** The nearest blockers, nearest first. */
  near: Contender[];
  /** Set when more blockers than `near` were ahead of it when last listed: the waiter itself, whose blockers a fresh listing tells. */
  more?: Contender | undefined;
}

/** The most blockers a waiter keeps: the nearest one and as many as one check reads (readEach) rather than lists. */
export const KEPT_AHEAD = LIST_INSTEAD_OF_READ + 1;

/**
 * The blockers of `queue[at]` among `queue` (contenders in queue order): every contender ahead for
 * an exclusive one, exclusive ones ahead for a shared one (blocks()); past KEPT_AHEAD of them,
 * only the nearest kept, so that the few waiters near the front keep a few each and all the
 * others one. Walks back from `at` only as far as it keeps: a waiter far back in a long queue
 * does not walk the queue ahead of it.
 */
export function keptBlockers(queue: readonly Contender[], at: number): Blockers {
  const self = queue[at]!;
  const near: Contender[] = [];
  for (let i = at - 1; i >= 0; i--) {
    const ahead = queue[i]!;
    if (!blocks(ahead, self)) continue;
    if (near.length === KEPT_AHEAD) return { near: [near[0]!], more: self };
    near.push(ahead);
  }
  // A copy of the exact length: push() left room for 16 more, 128 bytes a waiter keeps while it waits.
  return { near: near.slice() };
}

/**
 * Those of a later listing that block `self`. Sequences ahead of ours were all taken before our
 * create (the server numbers children in creation order), so every one of them was in our first
 * listing, and any of those it lacks is gone for good: the listing holds the present ones of the
 * blockers we first saw, whether we kept them or not. By sequence, not by our name's place: our
 * own node may be gone (its watch tells, see watchOwnNode).
 */
function blockersIn(children: readonly string[], self: Contender): Blockers {
  const ahead = sortContenders(children).filter((c) => compareSeq(c.seq, self.seq) < 0);
  return keptBlockers([...ahead, self], ahead.length);
}

/**
 * The plain check: which of `candidates` (contenders that were ahead of us) still block us,
 * nearest first. Nodes ahead of us only ever go, so a node gone (NONODE) is out for good, and so
 * is, for a reader, a writer that downgraded (the marker in its data). One round trip reads
 * their data (readEach: a multiRead, or pipelined reads on ZooKeeper 3.5); past
 * LIST_INSTEAD_OF_READ of them, or when we did not keep them all, one listing first, which is all
 * a writer needs (anyone still ahead blocks it) and all a reader gets while many writers are left
 * (watching the nearest one then finds the marker, see BlockerWait).
 */
export async function presentBlockers(o: QueueWait, candidates: Blockers): Promise<Blockers> {
  let left = candidates;
  if (left.more || left.near.length > LIST_INSTEAD_OF_READ) {
    const { children } = await o.client.getChildren(o.lockPath, { signal: o.deadline.requestSignal });
    if (left.more) left = blockersIn(children, left.more);
    else {
      const present = new Set(children);
      left = { near: left.near.filter((c) => present.has(c.name)) };
    }
    if (o.kind === 'exclusive' || left.more || left.near.length > LIST_INSTEAD_OF_READ) return left;
  }
  const { near } = left;
  if (near.length === 0) return left;
  const reads = await readEach(
    o.client,
    near.map((c) => joinPath(o.lockPath, c.name)),
    { signal: o.deadline.requestSignal },
  );
  return { near: near.filter((_, i) => stillBlocks(o, reads[i])) };
}

function stillBlocks(o: QueueWait, read: EachRead | undefined): boolean {
  if (read instanceof ZooKeeperError) return read.code !== 'NONODE';
  // A downgraded writer holds a read lock: it no longer blocks readers.
  return !(o.kind === 'shared' && read !== undefined && isDowngraded(read.data));
}

/**
 * Runs `attempt` (reads about the queue) until it answers: again once reconnected after a
 * connection loss (bounded by the deadline); SessionLost when our session, and our node with it,
 * has ended.
 */
export async function untilAnswered<T>(o: QueueWait, owner: bigint, attempt: () => Promise<T>): Promise<T> {
  for (;;) {
    if (o.client.sessionId !== owner) throw new SessionLost();
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof ZooKeeperError)) throw error;
      if (error.code === 'SESSIONEXPIRED') throw new SessionLost();
      if (!isTransient(error)) throw error;
      await awaitSession(o.client, owner, o.deadline);
    }
  }
}
