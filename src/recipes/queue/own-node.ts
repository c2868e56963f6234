import type { WatchEvent, ZooKeeperClient } from '../../client/index.js';
import type { NodeWatch } from '../lease/lease-monitor.js';
import { SessionLost } from './queue-watch.js';

/** Someone deleted our node while it waited (an operator, a forced release): our place in the queue is gone. */
export class NodeLost extends Error {}

/**
 * Throws what ends our wait when our node is no longer ours: NodeLost when its watch saw it
 * deleted, SessionLost when the client's session is not `owner` any more. A getData queued across
 * an expiry runs on the new session: our node may be gone although every blocker went.
 */
export function stillOurs(client: ZooKeeperClient, owner: bigint, ours: OwnNode | undefined): void {
  if (ours?.deleted) throw new NodeLost();
  if (client.sessionId !== owner) throw new SessionLost();
}

/**
 * A waiting node can be deleted by someone else; a lease on it would be lost before it began,
 * while a newcomer sees an empty queue. Watched from the start of the wait, sent right before the
 * first blocker's watch, so it costs no round trip. The server notifies in commit order: if our
 * node went before our last blocker did, we hear of it first. A deletion after that is a holder's
 * node deleted, which the lease's own monitor reports. The watch is not removed once we hold (the
 * release fires it); `ignore` makes it harmless.
 */
export function watchOwnNode(client: ZooKeeperClient, path: string, onEnd?: () => void): OwnNode {
  return new OwnNode(client, path, onEnd);
}

/** A class, not an object literal with getters and closures: one is kept by every waiter, and its bytes count (see the memory bench). */
export class OwnNode implements NodeWatch {
  /** What ended the watch on our node: its deletion, our session's expiry or the client's close. */
  ended: 'deleted' | 'expired' | 'closed' | undefined;
  private ignored = false;
  /** The server answered that the watch is set, and it has not fired since. */
  private armed = false;
  /** Who hears the watch's event once the lease's monitor took it over. */
  private adopter: ((event: WatchEvent) => void) | undefined;

  constructor(
    client: ZooKeeperClient,
    path: string,
    private readonly onEnd: (() => void) | undefined,
  ) {
    // Bound, not a closure over this: half the bytes, and it is kept by every waiter.
    client.exists(path, { watch: this.heard.bind(this) }).then(
      (stat) => {
        if (stat === null) this.end('deleted');
        // Unless it already fired (its event comes before the reply of any later request, not of this one).
        else if (!this.ended) this.armed = true;
      },
      // Not watched across a lost connection: an admin deleting a waiting node then is caught by the lease monitor.
      () => undefined,
    );
  }

  private heard(event: WatchEvent): void {
    this.armed = false;
    if (this.adopter) this.adopter(event);
    else this.end(event.type === 'deleted' || event.type === 'expired' || event.type === 'closed' ? event.type : undefined);
  }

  private end(why: OwnNode['ended']): void {
    if (this.ignored || this.ended || !why) return;
    this.ended = why;
    this.onEnd?.();
  }

  adopt(watcher: (event: WatchEvent) => void): boolean {
    if (!this.armed) return false;
    this.adopter = watcher;
    return true;
  }

  get deleted(): boolean {
    return this.ended === 'deleted';
  }

  ignore(): void {
    this.ignored = true;
  }
}
