import type { WatchEvent, ZooKeeperClient } from '../../client/index.js';
import { ZooKeeperError, joinPath } from '../../client/index.js';
import type { Contender, ContenderKind } from './contender-name.js';
import { blocks, compareSeq, sortContenders } from './contender-name.js';
import type { Deadline } from '../support/deadline.js';
import type { LockError } from '../support/lock-error.js';
import { isDowngraded, writtenByZklock } from '../support/owner-data.js';
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

type Outcome = 'gone' | 'again' | 'expired';

/**
 * Resolves when `blocker` is gone, with whether its data as last read was written by zklock
 * (writtenByZklock; undefined when it was gone before we looked): all a waiter asks of it, so the
 * data itself is not kept while waiting. `stop` (default: the deadline's signal, none when nothing
 * can end the wait, so that an unbounded waiter carries no AbortController) ends the wait early,
 * its watch removed.
 */
export async function waitUntilGone(o: QueueWait, blocker: Contender, owner: bigint, stop = o.deadline.requestSignal): Promise<boolean | undefined> {
  const path = joinPath(o.lockPath, blocker.name);
  const seen: Seen = {};
  for (;;) {
    if (o.client.sessionId !== owner) throw new SessionLost();
    const outcome = await watchOnce(o, path, owner, seen, stop);
    if (outcome === 'gone') return seen.byZklock;
    if (outcome === 'expired') throw new SessionLost();
  }
}

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
  return { near };
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
 * (watching the nearest one then finds the marker, see watchOnce).
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

/**
 * Sets a data watch on `path` (getData, not exists: a vanished node must not leave a creation
 * watch behind) and waits for it; what the data read tells goes into `seen`. When `stop` aborts first the
 * watch is removed and the wait rejects with the signal's reason.
 */
/** What a waiter learned of its blocker's data: whether zklock wrote it (undefined: not read). */
interface Seen {
  byZklock?: boolean;
}

function watchOnce(o: QueueWait, path: string, owner: bigint, seen: Seen, stop: AbortSignal | undefined): Promise<Outcome> {
  const { client, deadline } = o;
  return new Promise<Outcome>((resolve, reject) => {
    let settled = false;
    const finish = (settle: () => void): void => {
      if (settled) return;
      settled = true;
      stop?.removeEventListener('abort', onAbort);
      settle();
    };
    const watcher = (event: WatchEvent): void => {
      finish(() => {
        if (event.type === 'deleted') resolve('gone');
        else if (event.type === 'expired') resolve('expired');
        else if (event.type === 'closed') reject(new ZooKeeperError('CLOSED', 'client closed while waiting for the lock', { path: o.lockPath, op: 'acquire' }));
        else resolve('again');
      });
    };
    const onAbort = (): void => {
      finish(() => reject(stop!.reason as LockError));
      client.removeWatcher(path, watcher).catch(() => undefined);
    };
    if (stop?.aborted) return onAbort();
    stop?.addEventListener('abort', onAbort, { once: true });
    client.getData(path, { watch: watcher }).then(
      ({ data }) => {
        seen.byZklock = writtenByZklock(data);
        // A downgraded writer holds a read lock: it no longer blocks readers.
        if (o.kind === 'shared' && isDowngraded(data)) {
          finish(() => resolve('gone'));
          client.removeWatcher(path, watcher).catch(() => undefined);
        }
      },
      async (error: unknown) => {
        if (!(error instanceof ZooKeeperError)) return finish(() => reject(error));
        if (error.code === 'NONODE') return finish(() => resolve('gone'));
        if (error.code === 'SESSIONEXPIRED') return finish(() => resolve('expired'));
        if (!isTransient(error)) return finish(() => reject(error));
        try {
          // 'again' re-checks the session first: an expiry meanwhile means our node is gone.
          await awaitSession(client, owner, deadline);
          finish(() => resolve('again'));
        } catch (waitError) {
          finish(() => reject(waitError));
        }
      },
    );
  });
}
