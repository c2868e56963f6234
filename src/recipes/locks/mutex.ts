import type { ZooKeeperClient } from '../../client/index.js';
import { ZooKeeperError, validatePath } from '../../client/index.js';
import type { ContenderKind, Layout } from '../queue/contender-name.js';
import { parseContender } from '../queue/contender-name.js';
import type { HeldNode, QueueOptions } from '../queue/contender-queue.js';
import { NotAcquired, acquireInQueue, queueHeld } from '../queue/contender-queue.js';
import type { AcquireOptions, TryAcquireOptions } from '../support/deadline.js';
import { Deadline, tryOnly } from '../support/deadline.js';
import { giveUp, giveUpNode } from '../support/abandon.js';
import { handOut } from '../lease/hand-out.js';
import { Lease, leaseDeleted, recordRefused } from '../lease/lease.js';
import type { LeaseOwner, RevocationOptions } from '../lease/lease.js';
import type { LeaseMonitorOptions } from '../lease/lease-monitor.js';
import { ownerData } from '../support/owner-data.js';
import { heldInProcess } from '../lease/holds.js';
import type { LockState } from '../inspect.js';
import { participantsOf } from '../inspect.js';
import { refuseInside, runSection, sectionOf } from '../lease/reentrancy.js';
import type { ReleasedContender } from '../queue/fast/sequence-proof.js';
import { provenSole } from '../queue/fast/sequence-proof.js';
import { releaseRecord } from '../queue/fast/release-record.js';
import { checkLockDelay } from '../queue/lock-delay.js';
import { isTransient } from '../support/transient.js';
import { checkSafetyMargin, safetyMargin } from '../lease/lease-monitor.js';
import { proveFresh } from '../lease/session-liveness.js';
import { checkRevocationOptions } from '../lease/revocation.js';
import type { AcquireMessage, LockKind } from '../diagnostics.js';
import { isInternal, lockTraced, traceAcquire } from '../diagnostics.js';
import type { AclOptions } from '../support/lock-acl.js';

export interface LockOptions extends LeaseMonitorOptions, RevocationOptions, AclOptions {
  /** Node names: Curator's (default) or kazoo's, so Java or Python services contend on the same path. */
  layout?: Layout;
  /** Owner id written into our node for inspection (default host:pid). */
  ownerId?: string;
  /** Fail with SESSIONEXPIRED when the session expires while waiting, instead of queueing again with the new session. */
  failOnSessionExpiry?: boolean;
}

/** Options of the exclusive queue locks (Mutex, NonReentrantMutex). */
export interface MutexOptions extends LockOptions {
  /**
   * Ms an acquire that follows an unclean handoff (the last holder's session expired, or its node
   * was deleted by someone else) keeps our node before resolving, so that the old holder has
   * time to notice its loss; a clean release passes the lock on at once. 0 (default): off. See
   * README, *Lock-delay*, and lock-delay.ts.
   */
  lockDelay?: number;
}

/** The options of a lock made without any: one object for all, not one per lock object. */
const NO_OPTIONS: MutexOptions = Object.freeze({});
/** The default of acquire's options: one object for every such call, which its Deadline keeps while it waits. */
const NO_ATTEMPT: AcquireOptions = Object.freeze({});

/** What one acquire's queue wait carries for the lease once our node holds (see [queueHeld]). */
interface MutexQueueOptions extends QueueOptions {
  attempt: AcquireOptions;
  /** Our last exclusive hold of this lock, whether or not the queue may use it as `previous`. */
  released: ReleasedContender | undefined;
}

/**
 * The fair lock of the queue of EPHEMERAL_SEQUENTIAL nodes under `lockPath`, for one kind of
 * contender. Mutex and the read/write lock's two sides are this with a name and a kind.
 */
export class QueueLock implements LeaseOwner {
  /** Our last exclusive hold whose deletion the server confirmed. */
  private released: ReleasedContender | undefined;
  /** Whether nobody else queued between our last two holds: only then is skipping the listing likely to pay. */
  private uncontended = true;
  /** The server refused a release record on this lock path (no write permission): stop asking. */
  private recordWriteRefused = false;
  private readonly records = { missed: false };
  private readonly ownerData: Buffer;
  /** 0 (off) or > 0: exclusive 'lock' queues only (readers releasing at once would fight over one record). */
  private readonly lockDelay: number;

  constructor(
    protected readonly client: ZooKeeperClient,
    readonly lockPath: string,
    private readonly kind: ContenderKind,
    private readonly role: 'lock' | 'rw',
    protected readonly options: MutexOptions = NO_OPTIONS,
  ) {
    validatePath(lockPath, 'lock');
    checkRevocationOptions(options, lockPath);
    checkSafetyMargin(options, lockPath, 'lock');
    this.lockDelay = kind === 'exclusive' && role === 'lock' ? checkLockDelay(options.lockDelay, lockPath) : 0;
    this.ownerData = ownerData(options.ownerId, { revocable: options.revocable });
  }

  /** Waits for the lock (bounded by `timeout` and/or `signal`). On failure no node of ours is left. */
  acquire(attempt: AcquireOptions = NO_ATTEMPT): Promise<Lease> {
    // Not async: an async function returning join's promise would add a promise and a job per waiter.
    try {
      this.precheck();
      if (this.traced()) return traceAcquire(this.traceFacts(), (message) => this.join(attempt, true, message));
      return this.join(attempt, true);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Whether this lock's acquires are traced: someone listens, and it is not a semaphore's queue lock. */
  private traced(): boolean {
    return lockTraced() && !isInternal(this.options);
  }

  /** What this lock's events name (see diagnostics.ts). */
  private traceFacts(): { lockPath: string; kind: LockKind; layout: Layout } {
    const kind = this.role === 'lock' ? 'mutex' : this.kind === 'exclusive' ? 'write' : 'read';
    return { lockPath: this.lockPath, kind, layout: this.options.layout ?? 'curator' };
  }

  /**
   * Fails fast where acquiring from this call chain can never succeed: a second node of ours
   * would queue behind our first (and behind any writer waiting for it) and wait forever.
   */
  protected precheck(): void {
    refuseInside(sectionOf(this), this.lockPath, 'WOULD_DEADLOCK', 'this call chain already holds this lock');
  }

  /**
   * Not an async function: a waiter spends its life in the queue (acquireInQueue), and a frame
   * suspended here for all that time would cost every waiter about 500 bytes (see blocker-watch.ts).
   * The queue calls [queueHeld] once our node holds. Throws synchronously on bad options; the
   * callers make that a rejection.
   */
  private join(attempt: AcquireOptions, wait: boolean, trace?: AcquireMessage): Promise<Lease> {
    checkSafetyMargin(this.options, this.lockPath, wait ? 'acquire' : 'tryAcquire', this.client);
    const previous = this.released;
    return acquireInQueue<MutexQueueOptions, Lease>(
      {
        client: this.client,
        lockPath: this.lockPath,
        kind: this.kind,
        layout: this.options.layout ?? 'curator',
        role: this.role,
        data: this.ownerData,
        deadline: new Deadline(attempt, this.lockPath, wait ? 'acquire' : 'tryAcquire'),
        failOnExpiry: this.options.failOnSessionExpiry ?? false,
        trace,
        wait,
        previous: this.uncontended ? previous : undefined,
        records: this.records,
        lockDelay: this.lockDelay || undefined,
        acl: this.options.acl,
        attempt,
        released: previous,
      },
      this,
    );
  }

  /** Our node holds the lock: the lease, handed out once proven fresh (and, revocable, once it read its node). */
  async [queueHeld](node: HeldNode, { attempt, deadline, released: previous }: MutexQueueOptions): Promise<Lease> {
    try {
      let lease: Lease | undefined;
      try {
        await proveFresh(this.client, safetyMargin(this.client, this.options), deadline, node.path, this.options.acl);
        lease = this.lease(node, previous);
        // A revocable lease is handed out once it has read its node: a request made while we
        // waited is then already on its signal. Bounded by the deadline, as every step is.
        if (this.options.revocable) await deadline.race(lease.revocationChecked);
      } catch (error) {
        // Our node holds the lock, and nobody will: it goes before the rejection, as a waiter's does.
        const { client } = this;
        await (lease ? giveUp(client, releaseQuietly(lease), deadline) : giveUpNode(client, node.path, node.stat.ephemeralOwner, deadline)).catch(() => undefined);
        throw deadline.failure(error);
      }
      return await handOut(lease, attempt, deadline);
    } finally {
      deadline.dispose();
    }
  }

  private lease(node: HeldNode, previous: ReleasedContender | undefined): Lease {
    if (this.kind !== 'exclusive') return new Lease(this.client, this.lockPath, node.path, node.stat, this.options, { owner: this, watched: node.watch });
    if (previous) this.uncontended = provenSole(previous, { seq: node.seq, czxid: node.stat.czxid });
    return new Lease(this.client, this.lockPath, node.path, node.stat, this.options, {
      owner: this,
      // Marked with our lockDelay once the handoff to us was proven clean or delayed (see lock-delay.ts).
      record: node.recordOver === null || this.recordWriteRefused ? undefined : { data: releaseRecord(node.name, node.handoff && this.lockDelay), version: node.recordOver },
      watched: node.watch,
      after: node.handoff && { kind: node.handoff, delayed: node.delayed ?? 0 },
    });
  }

  /** Our exclusive lease's node is gone: the sequence proof's next starting point (see provenSole). */
  [leaseDeleted](lease: Lease, forced: boolean): void {
    if (this.kind !== 'exclusive') return;
    // Read back from the node's name (the server wrote its sequence there) rather than kept per lease.
    const seq = parseContender(lease.node.slice(lease.node.lastIndexOf('/') + 1))!.seq;
    this.released = forced ? { seq, czxid: lease.fencingToken, forced } : { seq, czxid: lease.fencingToken };
  }

  [recordRefused](): void {
    this.recordWriteRefused = true;
  }

  /** Whether a lease taken from this lock object is held (not released, not lost), by any caller in this process. */
  isAcquiredInThisProcess(): boolean {
    return heldInProcess(this);
  }

  /** Who holds this lock path and who waits, in queue order (see inspectLock); nobody when the path does not exist. */
  async participants(): Promise<LockState> {
    return participantsOf(this.client, this.lockPath, 'queue');
  }

  /** Runs `fn` holding the lock, then releases it (even when `fn` throws); `maxHold` bounds the hold as acquire's does. */
  async runExclusive<T>(fn: (lease: Lease) => Promise<T> | T, options: AcquireOptions = {}): Promise<T> {
    const lease = await this.acquire(options);
    try {
      return await runSection(this, lease, async () => fn(lease));
    } finally {
      await releaseQuietly(lease);
    }
  }

  /**
   * Whether `lease`, taken from this lock, still holds by the server's word: our session is the
   * client's current one and our node is there, the very one we created. Reading `held` first
   * sets the lease's node watch, which goes before this read in the session's order: a loss after
   * the read reaches the lease's signal. `held` is read again once the reply is in: a reply that
   * waited out a stall in the socket says the node was there, not that the session still is (the
   * lease's liveness proof may have run out meanwhile). False when the server cannot be asked
   * (connection lost).
   */
  async confirmHeld(lease: Lease, signal?: AbortSignal): Promise<boolean> {
    if (!lease.held || this.client.sessionId !== lease.sessionId) return false;
    try {
      const stat = await this.client.exists(lease.node, { signal });
      return stat !== null && stat.czxid === lease.fencingToken && stat.ephemeralOwner === lease.sessionId && lease.held;
    } catch (error) {
      if (isTransient(error) || (error instanceof ZooKeeperError && error.code === 'SESSIONEXPIRED')) return false;
      throw error;
    }
  }

  /**
   * The lock if nobody holds or waits for it right now, else null; leaves no node when null.
   * What a timeout of 0 cannot mean (`acquire` refuses it): creating a missing lock path or
   * resolving a lost create reply takes round trips that a zero deadline would refuse. With a
   * `lockDelay`, a free lock after a handoff not proven clean is ours only once the delay is
   * served; `signal` cuts that short (ABORTED, our node deleted).
   */
  async tryAcquire(options: TryAcquireOptions = {}): Promise<Lease | null> {
    this.precheck();
    // Inside the traced call, as for the other locks: bad options end the trace with their error,
    // and a taken lock with a null result, not an error.
    const tryJoin = async (message?: AcquireMessage): Promise<Lease | null> => {
      try {
        return await this.join(tryOnly(options, this.lockPath), false, message);
      } catch (error) {
        if (error instanceof NotAcquired) return null;
        throw error;
      }
    };
    return this.traced() ? traceAcquire(this.traceFacts(), tryJoin) : tryJoin();
  }
}

/**
 * A fair, reentrant mutex (Curator's InterProcessMutex layout by default). `runExclusive` inside
 * `runExclusive` from the same async call chain re-enters at once (see Section for what the chain
 * covers); the node goes when the outermost call and every section re-entered from it have ended.
 * Unrelated concurrent tasks of this process queue like anyone else.
 */
export class Mutex extends QueueLock {
  constructor(client: ZooKeeperClient, lockPath: string, options: MutexOptions = NO_OPTIONS) {
    super(client, lockPath, 'exclusive', 'lock', options);
  }

  /** Inside `runExclusive` a second node of ours would wait for the first forever: re-enter with `runExclusive`. */
  protected override precheck(): void {
    refuseInside(sectionOf(this), this.lockPath, 'WOULD_DEADLOCK', 'this call chain holds this mutex: nest runExclusive to re-enter, acquire would wait for itself');
  }

  /**
   * Runs `fn` holding the lock, then releases it once `fn` and every section re-entered from it
   * have ended. Nested calls on this mutex from inside `fn` re-enter; after the lease was lost
   * (or its hold expired) they fail with LOCK_LOST. The hold bound is the outermost call's: a
   * nested call's options are not used.
   */
  override async runExclusive<T>(fn: (lease: Lease) => Promise<T> | T, options: AcquireOptions = {}): Promise<T> {
    const section = sectionOf(this);
    if (section?.lease.held) return section.reenter(() => fn(section.lease));
    return super.runExclusive(fn, options);
  }
}

/**
 * A fair mutex that is not reentrant: acquiring it again inside its own `runExclusive` fails at
 * once with WOULD_DEADLOCK instead of waiting for itself forever.
 */
export class NonReentrantMutex extends QueueLock {
  constructor(client: ZooKeeperClient, lockPath: string, options: MutexOptions = NO_OPTIONS) {
    super(client, lockPath, 'exclusive', 'lock', options);
  }
}

/** Releases unless already released; a client closed meanwhile has nothing left to release. */
export async function releaseQuietly(lease: Lease): Promise<void> {
  await lease[Symbol.asyncDispose]();
}
