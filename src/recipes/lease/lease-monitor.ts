import { performance } from 'node:perf_hooks';
import type { SessionEvent, Stat, WatchEvent, ZooKeeperClient } from '../../client/index.js';
import { ZooKeeperError } from '../../client/index.js';
import type { HoldLimit } from './hold-limit.js';
import type { LockLostReason } from '../support/lock-error.js';
import { LockError, LockLostError } from '../support/lock-error.js';
import type { SessionFollower } from './session-liveness.js';
import { follow, unfollow } from './session-liveness.js';
import { timerAt } from '../support/timer-at.js';
import { OVERLOAD_PAUSE_MS, isOverloaded, isTransient } from '../support/transient.js';
import type { MonitoredLease } from './lease-view.js';
import { leaseEnded, leaseLost, nodeRead } from './lease-view.js';

export interface LeaseMonitorOptions {
  /**
   * How long before the session could have expired on the leader to give the lock up (ms): room
   * for clock drift and for timers that fire late on a busy process. Default: a tenth of the
   * session timeout, at least 100 ms. A finite number of ms, 0 or more (INVALID_ARGUMENT when
   * the lock is made otherwise) and below the session timeout (INVALID_ARGUMENT at acquire,
   * before any request: the timeout is negotiated with each session).
   */
  safetyMargin?: number;
}

/**
 * INVALID_ARGUMENT naming `safetyMargin` and `path`: NaN would turn the early abort off (no
 * proof ever runs out "before NaN"), a negative margin would abort only after the leader may
 * have expired the session, and one of the whole session timeout or more would hand out leases
 * already lost. Without a negotiated timeout (no session yet, or `client` not given) only the
 * first two are judged.
 */
export function checkSafetyMargin(options: LeaseMonitorOptions, path: string, op: string, client?: ZooKeeperClient): void {
  const margin = options.safetyMargin;
  if (margin === undefined) return;
  if (typeof margin !== 'number' || !Number.isFinite(margin) || margin < 0) {
    throw new LockError('INVALID_ARGUMENT', `safetyMargin must be a finite number of ms >= 0, got ${String(margin)}`, { path, op });
  }
  const timeout = client?.sessionTimeout ?? 0;
  if (timeout > 0 && margin >= timeout) {
    throw new LockError('INVALID_ARGUMENT', `safetyMargin (${margin} ms) must be below the session timeout (${timeout} ms)`, { path, op });
  }
}

/** The lease's safety margin (ms): the option, or a tenth of the session timeout, at least 100 ms. */
export function safetyMargin(client: ZooKeeperClient, options: LeaseMonitorOptions): number {
  return options.safetyMargin ?? Math.max(client.sessionTimeout / 10, 100);
}

/**
 * A watch already set on our node before the lease existed (a waiter's, see watchOwnNode in
 * contender-queue.ts): a monitor that takes it over needs no read of its own.
 */
export interface NodeWatch {
  /** From now on `watcher` hears the watch's event; false (nothing changed) when the watch is not known set, or already fired. */
  adopt(watcher: (event: WatchEvent) => void): boolean;
}

/** Nothing to wait for (a lease that reads no data, a look once watching): one settled promise for all, none made per look. */
const NOTHING_TO_READ: Promise<void> = Promise.resolve();

/**
 * Watches what a lease depends on and aborts its signal when the lock is, or may be, lost:
 * the session expired; our node was deleted, or replaced by a namesake (the simple lock's fixed
 * path), told apart by its czxid and owner; the client closed; or the leader may have expired the
 * session, connected or not: the proof that it is alive (client.sessionAliveUntil(), kept fresh
 * by sync heartbeats from the client's first lock on) runs out within the safety margin.
 */
/** A bounded hold's state in its monitor (see LeaseMonitor.hold). */
interface BoundedHold {
  readonly limit: HoldLimit;
  readonly force: () => void;
  cancel: (() => void) | undefined;
}

export class LeaseMonitor implements SessionFollower {
  // The signal, and the error that is its reason, are made only when someone asks for the signal:
  // most leases are released without anyone looking, and an Error per release is costly.
  private controller: AbortController | undefined;
  private lost: { reason: LockLostReason; message: string } | undefined;
  private stopped = false;
  /** The node watch could not be set (connection lost): set it on the next reconnect. */
  private rewatch = false;
  private rewatchTimer: NodeJS.Timeout | undefined;
  /**
   * The bound on the hold (see limitHold), what deletes our node once its grace is over, and what
   * cancels the bound's pending step (its expiry, then its forced release). One field, made only
   * for a bounded hold: a lease without maxHold pays a slot, not three.
   */
  private hold: BoundedHold | undefined;
  private watching = false;
  /** Our node's watch (or its read) told us the node was deleted: kept after the lease ended, for its release (see deletionHeard). */
  private deleted = false;
  /** Our node's watcher: bound, not an arrow, which would keep a context of its own besides. */
  private readonly watcher: (event: WatchEvent) => void = this.onNodeEvent.bind(this);
  readonly margin: number;
  /** Answered when the first read of our node is (whatever it said); see `onData`. */
  readonly firstRead: Promise<void>;

  constructor(
    private readonly client: ZooKeeperClient,
    private readonly nodePath: string,
    /** Our node as created: its czxid and owner session tell it from a namesake. */
    private readonly node: Pick<Stat, 'czxid' | 'ephemeralOwner'>,
    options: LeaseMonitorOptions,
    /** The lease watched: hears of its loss and end, and of our node's data if `readsData`. */
    private readonly lease: MonitoredLease,
    /**
     * The lease hears our node's data at every read of the watch (a revocable lease, see
     * revocation.ts): the watch is then set at once, not on the first look, and re-armed on every
     * change as always.
     */
    readsData: boolean,
    /** Set at once, at the hand-out (not on the lock's first look): the lease's user may look at it (see below). */
    watchNow: boolean,
    /** A watch on our node set while it waited, taken over rather than read again (not by a lease that reads its data). */
    watched?: NodeWatch,
  ) {
    this.margin = safetyMargin(client, options);
    follow(client, this);
    if (client.sessionId !== node.ephemeralOwner) this.lose('SESSIONEXPIRED', 'the session that created the node has ended');
    // Born lost: the proof did not reach past the margin (see proveFresh). Said at once, not a timer tick later.
    else this.checkProof();
    // Still set since before the hand-out: a deletion since then is heard as from our own read.
    if (!readsData && watched?.adopt(this.watcher)) this.watching = true;
    this.firstRead = readsData ? this.observe() : NOTHING_TO_READ;
    // Watched from the hand-out, not from the first look: a look answers synchronously, and a
    // watch set only then would answer it from what the acquire knew, however long ago (a node
    // deleted meanwhile, the lock taken by another session, still said held). Watched from here,
    // our node's deletion is notified to us before any later reply (the server orders both), so
    // a look never says held once our client has heard from a server state without our node.
    // Internal leases (a semaphore's place in its queue) are looked at only by their lock.
    if (watchNow) void this.observe();
  }

  /**
   * The liveness timer alone is not enough: after a stall (SIGSTOP, a long GC, a blocked event
   * loop) Node reads the sockets before it runs the timers that fell due meanwhile, so a reply
   * read then would meet a lease whose proof ran out while its timer has not yet said so. Every
   * look at the lease (`signal`, `held`) asks the clock itself.
   */
  private checkProof(): void {
    if (!this.lost && this.client.sessionAliveUntil() - this.margin <= performance.now()) this.livenessLost();
  }

  /** The proof runs out within the margin: said by the client's liveness (see follow), or by checkProof. */
  livenessLost(): void {
    const timeout = this.client.sessionTimeout;
    this.lose('SESSION_MAY_HAVE_EXPIRED', `no proof within the last ${timeout - this.margin} ms that the leader still knows the session (timeout ${timeout} ms)`);
  }

  /**
   * Sets the watch on our node, once: at hand-out (see the constructor), or for an internal lease
   * when its lock first looks (signal, held). A node already gone by then is reported at once
   * (getData answers NONODE).
   */
  private observe(): Promise<void> {
    // A lease already known lost needs no watch.
    if (this.watching || this.lost) return NOTHING_TO_READ;
    this.watching = true;
    return this.watchNode();
  }

  get signal(): AbortSignal {
    this.checkProof();
    void this.observe();
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.lost) this.controller.abort(this.lostError(this.lost));
    }
    return this.controller.signal;
  }

  /** Why the lease ended, as far as it knows now: no clock read, no watch set (as `isLost` would). */
  get endedBy(): LockLostReason | undefined {
    return this.lost?.reason;
  }

  /**
   * True once our node's watch or read has shown it deleted, also after the lease ended: a
   * release must then send no delete, whatever a read of the path says (a namesake may stand
   * there). False says nothing when nobody watched (see observe).
   */
  get deletionHeard(): boolean {
    return this.deleted;
  }

  /**
   * The LockLostError the signal carries (or would: none is made here, a lease's signal costs
   * an AbortController), read against the clock as `isLost` is; undefined while not lost.
   */
  get lostNow(): LockLostError | undefined {
    this.checkProof();
    void this.observe();
    return this.lost === undefined ? undefined : this.lostError(this.lost);
  }

  /** True once the lock is, or may be, lost (or released). */
  get isLost(): boolean {
    this.checkProof();
    void this.observe();
    return this.lost !== undefined;
  }

  /**
   * Ends the lease with HOLD_EXPIRED at `limit.expiresAt` (at once if that has passed) unless it
   * ended first (lost, released); then, with `forceReleaseAfter`, runs `force` that much later
   * unless released or handed over first. Unref'd: a bound never keeps the process alive.
   */
  limitHold(limit: HoldLimit, force: () => void): void {
    const hold: BoundedHold = (this.hold = { limit, force, cancel: undefined });
    if (this.lost) {
      if (this.lost.reason === 'SESSION_MAY_HAVE_EXPIRED') this.armForce();
    } else if (limit.expiresAt <= performance.now()) this.expireHold();
    else hold.cancel = timerAt(limit.expiresAt, () => this.expireHold(), true);
  }

  /** The bound given to limitHold, if any. */
  get holdLimit(): HoldLimit | undefined {
    return this.hold?.limit;
  }

  private expireHold(): void {
    this.lose('HOLD_EXPIRED', `held for its maxHold of ${this.hold!.limit.maxHold} ms; the node stays until released`);
  }

  /**
   * The forced release, due at the end of the grace. Armed only after the loss's abort listeners
   * ran: one that released the lease (or a downgrade's handover) must leave no delete behind.
   * Dropped once the node is gone without it: the client closed or the session ended (the server
   * deletes the node with it), or someone deleted it (lose() hears that from the node's watch,
   * set here if nobody looked at the lease before). A timer left armed would hold the lease and
   * its client until the grace is over.
   */
  private armForce(): void {
    const hold = this.hold!;
    const { limit, force } = hold;
    if (limit.forceReleaseAfter === undefined || this.stopped || this.client.terminated || this.client.sessionId !== this.node.ephemeralOwner) return;
    // The loss unsubscribed the monitor from the session: the grace listens on its own.
    const unsubscribe = this.client.onState((event) => {
      if (event === 'closed' || event === 'expired' || event === 'connected') this.hold?.cancel?.();
      else if (event === 'reconnected') this.resumeWatch();
    });
    const cancel = timerAt(
      limit.expiresAt + limit.forceReleaseAfter,
      () => {
        unsubscribe();
        force();
      },
      true,
    );
    hold.cancel = () => {
      cancel();
      unsubscribe();
      clearTimeout(this.rewatchTimer);
    };
    // observe() sets no watch once lost: without one, a deletion by someone else would go unheard until the grace ends.
    if (!this.watching) {
      this.watching = true;
      void this.watchNode();
    }
  }

  /** Sets the node's watch again if it could not be set while disconnected (see watchNode). */
  private resumeWatch(): void {
    if (!this.rewatch) return;
    this.rewatch = false;
    void this.watchNode();
  }

  private lostError(lost: { reason: LockLostReason; message: string }): LockLostError {
    return new LockLostError(lost.reason, this.nodePath, lost.message);
  }

  private watchNode(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return this.client.getData(this.nodePath, { watch: this.watcher }).then(({ data, stat }) => {
      if (stat.czxid !== this.node.czxid || stat.ephemeralOwner !== this.node.ephemeralOwner) {
        this.deleted = true;
        this.lose('NODE_DELETED', 'our lock node was deleted and another node now has its name');
      } else if (!this.stopped && !this.lost) this.lease[nodeRead](data);
    }, (error: unknown) => {
      if (error instanceof ZooKeeperError && error.code === 'NONODE') this.deleted = true;
      if (this.stopped || !(error instanceof ZooKeeperError)) return;
      if (error.code === 'NONODE') this.lose('NODE_DELETED', 'our lock node no longer exists');
      // CONNECTIONLOSS: the state listener decides; the watch is set again on reconnect.
      else if (isTransient(error) || isOverloaded(error)) {
        if (this.client.state !== 'connected') this.rewatch = true;
        // Not sent: again once the client's queue had a moment to drain (see transient.ts).
        else if (isOverloaded(error)) this.rewatchTimer = setTimeout(() => void this.watchNode(), OVERLOAD_PAUSE_MS);
        else void this.watchNode();
      }
    });
  }

  private onNodeEvent(event: WatchEvent): void {
    // Heard after the release began too: a delete it has not sent yet must not be (see deletionHeard).
    if (event.type === 'deleted') this.deleted = true;
    if (this.stopped) return;
    if (event.type === 'deleted') this.onDeleted();
    else if (event.type === 'dataChanged' || event.type === 'created') void this.watchNode();
  }

  /** Our own client.close() deletes the node too, and its deletion event may come before the 'closed' state. */
  private onDeleted(): void {
    if (this.client.closing) this.lose('CLOSED', 'the client was closed');
    else this.lose('NODE_DELETED', 'our lock node was deleted by someone else');
  }

  /** Every state change of the client, until the lease ends (see follow). */
  sessionEvent(event: SessionEvent): void {
    switch (event) {
      case 'reconnected':
        this.resumeWatch();
        break;
      case 'expired':
      case 'connected':
        this.lose('SESSIONEXPIRED', 'the session expired; the server deleted our lock node');
        break;
      case 'closed':
        this.lose('CLOSED', 'the client was closed');
        break;
    }
  }

  private lose(reason: LockLostReason, message: string): void {
    if (this.lost) {
      // Lost already (an expired hold, a lapsed proof), and now the node is gone: no forced release of it is left to do.
      if (reason === 'NODE_DELETED' || reason === 'CLOSED') this.hold?.cancel?.();
      return;
    }
    this.lost = { reason, message };
    this.lease[leaseLost](reason, message);
    this.controller?.abort(this.lostError(this.lost));
    this.detach();
    // The node outlives these two losses: a hung holder must not keep it (a session that did
    // expire meanwhile makes the delete a no-op: deleteGuaranteed checks the owner).
    if (this.hold && (reason === 'HOLD_EXPIRED' || reason === 'SESSION_MAY_HAVE_EXPIRED')) this.armForce();
    this.lease[leaseEnded]();
  }

  /**
   * The lease was released: abort with RELEASED and stop watching. When the node stays (handed to
   * another lease by a downgrade) our watcher is removed too: its watch would otherwise hold this
   * monitor until the node's next change. A deleted node fires and ends the watch by itself, and
   * a removal there would cost every release a request.
   */
  stop(nodeKept: boolean): void {
    this.lose('RELEASED', 'the lease was released');
    this.stopped = true;
    // Lost already (an expired hold, a lapsed proof), so lose() did not run: a forced release may be due still.
    this.hold?.cancel?.();
    // Best effort: a watcher left behind only delays its own garbage collection (it ignores events once stopped).
    if (nodeKept && this.watching) this.client.removeWatcher(this.nodePath, this.watcher).catch(() => undefined);
  }

  private detach(): void {
    clearTimeout(this.rewatchTimer);
    // A loss ends the hold's clock; lose() arms the forced release, if still due, only after this.
    this.hold?.cancel?.();
    unfollow(this.client, this);
  }
}
