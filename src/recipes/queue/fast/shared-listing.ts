import type { Stat, ZooKeeperClient } from '../../../client/index.js';
import { ZooKeeperError } from '../../../client/index.js';
import type { Contender } from '../contender-name.js';
import { sortContenders } from '../contender-name.js';
import { untilAborted } from '../../support/any-signal.js';

/**
 * One listing for many joins. The plain queue lists the lock path after every create, so n
 * waiters joining one lock make the server send O(n²) names: 10,000 waiters of one process (100
 * sessions × 100) meant 10,000 listings of up to 590 KB each, and the overloaded server then let
 * sessions lapse. Here the joins of one client on one lock path share a listing: while one is on
 * its way, the joins that ask for one meanwhile wait for the next, which is sent once that one is
 * answered, for all of them together. Each join then finds its own place in the shared listing by
 * a binary search (indexOfSeq), keeps its few blockers (keptBlockers), and drops the listing: the
 * listing lives as long as its joins take to read it, so the memory per waiter stays flat.
 *
 * Why it is safe: a join asks for a listing only after it sent its create (createProtected), and a
 * listing it shares is sent after that, on the same client: one session runs its requests in the
 * order they were sent, so the listing was read after our create ran, as the plain queue's own
 * listing pipelined behind the create is. It therefore holds every contender with a smaller
 * sequence that was still there, and our own node unless someone deleted it meanwhile (found
 * missing: NodeLost, the join queues again, as with a listing of its own). A listing sent on a
 * later session than our create's does not hold our node (ephemeral, gone with that session):
 * the join finds the session changed and ends as a wait that outlives its session does
 * (SessionLost: queue again, or SESSIONEXPIRED with failOnSessionExpiry). The listing is only ever read, never
 * changed, by the joins that share it. What it costs a join: when it asks while a listing is on
 * its way, up to one round trip more than its own listing pipelined behind its create would take.
 */
export interface Listing {
  /** The lock path's contenders in queue order (sortContenders): shared by the joins it answers, never changed. */
  queue: readonly Contender[];
  /** The lock path's stat as listed. */
  stat: Stat;
}

/** Each client's lines of listings, by lock path; a path's line goes once no listing of it is on its way or asked for. */
const lines = new WeakMap<ZooKeeperClient, Map<string, Line>>();

/**
 * A listing of `parent` read after every request this client has sent so far, shared with the
 * other joins that ask meanwhile. `signal` ends this join's wait (ABORTED, as the client's own
 * requests do), not the listing, which the others may still wait for.
 */
export function sharedListing(client: ZooKeeperClient, parent: string, signal: AbortSignal | undefined): Promise<Listing> {
  let paths = lines.get(client);
  if (!paths) lines.set(client, (paths = new Map<string, Line>()));
  let line = paths.get(parent);
  if (!line) {
    const own = paths;
    line = new Line(client, parent, () => own.delete(parent));
    paths.set(parent, line);
  }
  const listing = line.ask();
  // ABORTED, the client's own error for an aborted request.
  return signal ? untilAborted(listing, signal, () => new ZooKeeperError('ABORTED', 'request aborted', { op: 'getChildren', path: parent, cause: signal.reason })) : listing;
}

/** The listings of one lock path by one client: at most one on its way, and one asked for behind it. */
class Line {
  private sending = false;
  /** The joins that asked while a listing was on its way: they share the next one. */
  private next: { promise: Promise<Listing>; resolve: (listing: Listing) => void; reject: (error: unknown) => void } | undefined;

  constructor(
    private readonly client: ZooKeeperClient,
    private readonly parent: string,
    private readonly idle: () => void,
  ) {}

  ask(): Promise<Listing> {
    // Sent at once: asked after our create was sent, so it runs after it.
    if (!this.sending) return this.send();
    if (!this.next) {
      let resolve!: (listing: Listing) => void;
      let reject!: (error: unknown) => void;
      const promise = new Promise<Listing>((res, rej) => ((resolve = res), (reject = rej)));
      this.next = { promise, resolve, reject };
    }
    return this.next.promise;
  }

  private send(): Promise<Listing> {
    this.sending = true;
    const listing = this.client.getChildren(this.parent).then(({ children, stat }): Listing => ({ queue: sortContenders(children), stat }));
    const answered = (): void => {
      this.sending = false;
      const waiting = this.next;
      this.next = undefined;
      // Sent now, after every create of the joins that asked for it.
      if (waiting) this.send().then(waiting.resolve, waiting.reject);
      else this.idle();
    };
    listing.then(answered, answered);
    return listing;
  }
}
