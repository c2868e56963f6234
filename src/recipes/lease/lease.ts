import type { Op, OpResult, Stat, ZooKeeperClient } from '../../client/index.js';
import { ZooKeeperError } from '../../client/index.js';
import type { DeleteOptions } from '../support/guaranteed-delete.js';
import { deleteGuaranteed } from '../support/guaranteed-delete.js';
import { clientsOf, lostNow } from './hand-out.js';
import type { HoldLimit } from './hold-limit.js';
import { limitHold } from './hold-limit.js';
import type { LeaseMonitorOptions, NodeWatch } from './lease-monitor.js';
import { LeaseMonitor } from './lease-monitor.js';
import type { Handoff } from '../queue/lock-delay.js';
import { LockError } from '../support/lock-error.js';
import type { PendingRevocation } from './revocation.js';
import { RevocationRequest } from './revocation.js';
import { isInternal, lostChannel, publishLost, releaseChannel, traceRelease } from '../diagnostics.js';
import type { MonitoredLease } from './lease-view.js';
import { leaseEnded, leaseLost, nodeRead } from './lease-view.js';
import type { LockLostReason } from '../support/lock-error.js';
import { track, untrack } from './holds.js';

export interface RevocationOptions {
  /**
   * Curator's revocable lock (InterProcessMutex.makeRevocable): the lease's `revocationRequested`
   * signal aborts when someone asks the holder to let go (requestRevocation, `zklock revoke`,
   * Curator's Revoker). Costs one more read and watch of our own node per acquire.
   */
  revocable?: boolean;
  /**
   * Called with the lease when its revocation is requested (needs `revocable: true`): once per
   * lease, only while it is held, and never before the caller has it (it runs after acquire or
   * downgrade has returned). A downgrade passes a pending request on to the read lease, whose
   * signal is then aborted; the callback is not called again for it if the write lease's ran.
   * A throw is rethrown on its own, as an uncaught exception: it cannot harm the lease or the lock.
   */
  onRevocationRequested?: (lease: Lease) => void;
}

export interface LeaseOptions extends LeaseMonitorOptions, RevocationOptions {
  /**
   * Our node's name is not unique to this acquisition (the simple lock's fixed path), so a
   * namesake may replace it: release deletes the node only if its czxid is still ours, and
   * `guard()` is refused (no atomic check can tell our node from a namesake).
   */
  reusableName?: boolean;
  /** What the lease this one took the node over from knew of a request (a downgrade may have overwritten it). */
  revocationPending?: PendingRevocation;
}

/** How a lock hears of its leases: methods of the lock object, one for all its leases, where closures made per lease cost every lease held. */
export const leaseDeleted: unique symbol = Symbol('leaseDeleted');
export const recordRefused: unique symbol = Symbol('recordRefused');

/** The lock that made a lease: it counts the lease while it lives (see holds.ts), and hears what its release did. */
export interface LeaseOwner {
  /**
   * Called once a release has the server's word that our node is gone. `forced`: not the holder's
   * own clean release — the hold limit's forced release, or a node already gone (someone else
   * deleted it) when released.
   */
  [leaseDeleted](lease: Lease, forced: boolean): void;
  /** Called when the server has no write permission for the release record (the node was deleted all the same). */
  [recordRefused](): void;
}

/** What a lease starts with besides its node, each part only where the lock uses it. */
export interface LeaseStart {
  owner?: LeaseOwner;
  /** Written into the lock path's data in the delete's transaction, if still at `version` (see release-record.ts). */
  record?: { data: Buffer; version: number };
  /** The watch our node had while it waited, if still set: the lease's monitor takes it over (see NodeWatch). */
  watched?: NodeWatch;
  /** Set by a lock with a lockDelay (see lock-delay.ts): how the lock came to us, and how long the acquire waited for that. */
  after?: { kind: Handoff; delayed: number };
}

/** The options and start of a lease that has none: one object for all, not one per lease. */
const NONE: Readonly<LeaseOptions & LeaseStart> = Object.freeze({});

/**
 * A held lock: it owns one node until released. Works with `await using`.
 *
 * What it guarantees: while `signal` is not aborted, our node exists and our session is alive, so
 * no other zklock, Curator or kazoo contender holds the lock. What it cannot: a process paused
 * (GC, SIGSTOP, swap) past its session timeout learns of the loss only when it runs again — use
 * `fencingToken` with the protected resource, or `guard()` for state kept in ZooKeeper.
 */
export class Lease implements AsyncDisposable, MonitoredLease {
  private released = false;
  private readonly monitor: LeaseMonitor;
  /** Made at once for a revocable lease; for another, only if someone looks at its signal (which then never aborts). */
  private revocation: RevocationRequest | undefined;
  /** The hold's forced release, once begun: true once the node is gone (or went with the session), false if the server refused. */
  private forced: Promise<boolean> | undefined;
  private readonly owner: LeaseOwner | undefined;
  private readonly record: LeaseStart['record'];
  private readonly after: LeaseStart['after'];

  constructor(
    private readonly client: ZooKeeperClient,
    /** The lock path (the contenders' parent, or the node itself for the simple lock). */
    readonly lockPath: string,
    /** Our node. */
    readonly node: string,
    /** Our node's Stat at creation. */
    readonly stat: Stat,
    private readonly options: LeaseOptions = NONE,
    start: LeaseStart = NONE,
  ) {
    const { owner, record, watched, after } = start;
    this.owner = owner;
    this.record = record;
    this.after = after;
    // Counted from here: the monitor may end the lease as it is made (its session already gone).
    if (owner) track(owner);
    try {
      // Only a revocable lease reads its node's data: the monitor's watch on it, set at once.
      if (options.revocable) this.revocationRequest();
      // Internal leases (a semaphore's place in its queue) are looked at only by their lock: their watch waits for its first look.
      this.monitor = new LeaseMonitor(client, node, stat, options, this, options.revocable === true, !isInternal(options), watched);
    } catch (error) {
      if (owner) untrack(owner);
      throw error;
    }
    if (options.revocable && options.revocationPending) this.revocation!.inherit(options.revocationPending);
  }

  /** Our node's data, read by the monitor's watch: only a revocable lease listens. */
  [nodeRead](data: Buffer): void {
    if (this.options.revocable) this.revocation!.observe(data);
  }

  /** Told by the monitor as it learns the loss (or the release), before the signal aborts. */
  [leaseLost](reason: LockLostReason, message: string): void {
    if (reason !== 'RELEASED' && lostChannel.hasSubscribers && !isInternal(this.options)) publishLost(this, reason, message);
  }

  /** Told once by the monitor: the lease ended (lost, released or handed over). */
  [leaseEnded](): void {
    if (this.owner) untrack(this.owner);
  }

  private revocationRequest(): RevocationRequest {
    const { onRevocationRequested } = this.options;
    return (this.revocation ??= new RevocationRequest(this, onRevocationRequested && (() => onRevocationRequested(this))));
  }

  /**
   * Answered once a revocable lease has read its node (a request made while it waited is seen
   * by then), whatever the read said; at once for others. Never rejects.
   */
  get revocationChecked(): Promise<void> {
    return this.monitor.firstRead;
  }

  /**
   * Grows with every acquisition of this lock, ensemble-wide (the node's creation zxid). Hand it
   * to the protected resource, which rejects a token lower than the highest it has seen.
   * A `bigint` (zxids are 64-bit): `JSON.stringify` throws on it, so log or send
   * `fencingToken.toString()`.
   */
  get fencingToken(): bigint {
    return this.stat.czxid;
  }

  /**
   * How the lock came to this lease, on locks made with a `lockDelay` (undefined otherwise):
   * `clean` when the last holder released it, `unclean` or `unknown` when that is not proven
   * (see README, *Lock-delay*); the acquire then waited `lockDelayed` ms before resolving.
   */
  get handoff(): Handoff | undefined {
    return this.after?.kind;
  }

  /** Ms the acquire held our node before resolving, after a handoff not proven clean; 0 when it did not wait. */
  get lockDelayed(): number {
    return this.after?.delayed ?? 0;
  }

  /** Its client, for the locks' hand-out (see handOut). */
  [lostNow](): unknown {
    return this.monitor.lostNow;
  }

  get [clientsOf](): readonly ZooKeeperClient[] {
    return [this.client];
  }

  /** The session that owns the node. */
  get sessionId(): bigint {
    return this.stat.ephemeralOwner;
  }

  /** Aborted, with a LockLostError as reason, when the lock is or may be lost, and on release. */
  get signal(): AbortSignal {
    return this.monitor.signal;
  }

  /**
   * Aborted, with a LockError REVOCATION_REQUESTED as reason, when someone asks this holder to let
   * go (requestRevocation, `zklock revoke`, Curator's Revoker), on a lock made with
   * `revocable: true`; already aborted when handed out if the request was on the node when the
   * lease first read it (an acquire hands the lease out only once that read was answered, and
   * rejects if its timeout or signal ends first). Only a request: the
   * lease stays held until released. Never aborts on other leases, nor after this one ended.
   */
  get revocationRequested(): AbortSignal {
    return this.revocationRequest().signal;
  }

  /**
   * The bound this lease was handed out with (`maxHold`), or undefined. `expiresAt` is on the
   * performance.now() clock: `holdLimit.expiresAt - performance.now()` ms are left. A downgrade's
   * read lease keeps its write lease's bound (the hold did not restart).
   */
  get holdLimit(): HoldLimit | undefined {
    return this.monitor.holdLimit;
  }

  /**
   * Starts the hold's clock (see HoldOptions); only the locks call it, as they hand the lease out.
   * At `expiresAt` the signal aborts with HOLD_EXPIRED, unless the lease ended first; with
   * `forceReleaseAfter`, our client deletes the node that much later, unless it was released.
   */
  [limitHold](limit: HoldLimit): void {
    this.monitor.limitHold(limit, () => this.forceRelease());
  }

  /**
   * A plain delete, never with the release record (see release-record.ts): the holder did not
   * let go cleanly, and waiters must not take this for a clean handoff. Czxid-checked for a
   * name others may reuse, as release is.
   */
  private forceRelease(): void {
    const { client, node, stat } = this;
    this.forced = deleteGuaranteed(client, node, stat.ephemeralOwner, this.options.reusableName ? this.namesakeSafe() : {}).then(
      (outcome) => {
        if (outcome !== 'ended') this.owner?.[leaseDeleted](this, true);
        return true;
      },
      // Refused (NOAUTH on the parent, say): the node stays until release(), which reports why.
      () => false,
    );
  }

  /**
   * How a node whose name others may reuse is deleted: only while a read shows it is still ours
   * (its czxid), and not once our watch heard it deleted. The read and the delete are two
   * requests: see README, *What a lease guarantees*, for the window that leaves.
   */
  private namesakeSafe(): DeleteOptions {
    return { czxid: this.stat.czxid, gone: () => this.monitor.deletionHeard };
  }

  /** True until released, lost or its hold expired. */
  get held(): boolean {
    return !this.released && !this.monitor.isLost;
  }

  /**
   * A transaction that commits only while our node exists (a `check` of it runs first), so a
   * holder that lost its lock cannot write. Results are those of `ops`. NOT_HELD when our node is
   * gone; GUARD_NOT_SUPPORTED on a lease whose node name others may reuse (SimpleLock).
   */
  async guard(ops: readonly Op[], options: { signal?: AbortSignal; timeout?: number } = {}): Promise<OpResult[]> {
    if (this.options.reusableName) {
      // A `check` compares only the data version, and a namesake created after ours went starts
      // at the same version 0: nothing in a transaction can compare czxid or owner, so the check
      // would pass on another holder's node. The monitor's verdict comes too late to close that gap.
      const why = 'guard() cannot tell this lock node from a namesake created after it: use the fencing token, or a Mutex';
      throw new LockError('GUARD_NOT_SUPPORTED', why, { path: this.node, op: 'guard' });
    }
    if (this.released) throw new LockError('NOT_HELD', 'the lease was released', { path: this.node, op: 'guard' });
    // A lease already known lost (or possibly lost, with the node still there) fails without a round trip.
    if (!this.held) throw new LockError('NOT_HELD', 'the lock was lost; nothing was written', { path: this.node, op: 'guard', cause: this.signal.reason });
    try {
      const results = await this.client.multi([{ op: 'check', path: this.node, version: -1 }, ...ops], options);
      return results.slice(1);
    } catch (error) {
      if (error instanceof ZooKeeperError && 'failedIndex' in error && error.failedIndex === 0) {
        throw new LockError('NOT_HELD', 'our lock node no longer exists; nothing was written', { path: this.node, op: 'guard', cause: error });
      }
      throw error;
    }
  }

  /**
   * Deletes our node (retried across reconnects until done or the session is gone). A second call
   * throws ALREADY_RELEASED. After a loss, or the hold's forced release, it resolves quietly (the
   * latter without a request of its own, once that delete is done).
   */
  release(): Promise<void> {
    return releaseChannel.hasSubscribers && !isInternal(this.options) ? traceRelease(this, this.monitor.endedBy, () => this.releaseNow()) : this.releaseNow();
  }

  private async releaseNow(): Promise<void> {
    if (this.released) throw new LockError('ALREADY_RELEASED', 'the lease was already released', { path: this.node, op: 'release' });
    this.end();
    if (this.forced && (await this.forced)) return;
    if (this.client.state === 'closed') {
      throw new ZooKeeperError('CLOSED', 'the client is closed: its session, and our node with it, is already gone', { path: this.node, op: 'release' });
    }
    const { owner, record } = this;
    const outcome = await deleteGuaranteed(
      this.client,
      this.node,
      this.stat.ephemeralOwner,
      this.options.reusableName ? this.namesakeSafe() : record ? { record: { ...record, path: this.lockPath, refused: owner && (() => owner[recordRefused]()) } } : {},
    );
    // A node someone else deleted was no clean release, whatever our lease had noticed of it.
    if (outcome !== 'ended') owner?.[leaseDeleted](this, outcome === 'missing');
  }

  /**
   * Gives our node to another lease (a downgrade): this one is released without deleting it, its
   * watch removed. Returns what the next lease inherits of a revocation request.
   */
  handOver(): PendingRevocation {
    if (this.released) throw new LockError('ALREADY_RELEASED', 'the lease was already released', { path: this.node, op: 'handOver' });
    this.released = true;
    this.monitor.stop(true);
    return this.revocation?.handOver() ?? { requested: false, called: false };
  }

  private end(): void {
    this.released = true;
    this.revocation?.end();
    this.monitor.stop(false);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (!this.released && this.client.state !== 'closed') await this.release();
  }
}
