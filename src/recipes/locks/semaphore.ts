import type { WatchEvent, ZooKeeperClient } from '../../client/index.js';
import { ZooKeeperError, joinPath, validatePath } from '../../client/index.js';
import type { ContenderInfo, LockState } from '../inspect.js';
import { kazooLeaseHolders, kazooSemaphoreOf, leaseHoldersOf, participantsOf } from '../inspect.js';
import { refuseLayout, verifyLeaseLimit } from './lease-limit.js';
import { MultiLease } from './multi-lock.js';
import type { AcquireOptions, TryAcquireOptions } from '../support/deadline.js';
import { Deadline, tryOnly } from '../support/deadline.js';
import type { HoldOptions } from '../lease/hold-limit.js';
import { handOut } from '../lease/hand-out.js';
import type { Lease } from '../lease/lease.js';
import type { LeaseMonitorOptions } from '../lease/lease-monitor.js';
import type { Layout } from '../queue/contender-name.js';
import { LockError } from '../support/lock-error.js';
import type { LockOptions } from './mutex.js';
import { Mutex, releaseQuietly } from './mutex.js';
import { awaitSession } from '../support/reconnect.js';
import { isTransient } from '../support/transient.js';
import { checkSafetyMargin } from '../lease/lease-monitor.js';
import { internalLock, lockTraced, traceAcquire } from '../diagnostics.js';
import type { AclOptions } from '../support/lock-acl.js';
import { SemaphoreLeases, placeLost, sessionLost } from './semaphore-leases.js';

export interface SemaphoreOptions extends LeaseMonitorOptions, AclOptions {
  ownerId?: string;
  /**
   * `'curator'` (default): Curator's InterProcessSemaphoreV2 layout, the queue at `<path>/locks`,
   * leases under `<path>/leases`. `'kazoo'`: kazoo's Semaphore layout, the queue a kazoo lock at
   * `<path>-__lock__`, leases the path's own children, every one of them counted: it shares a
   * path with kazoo's Semaphore. Each refuses a path the other layout uses (FOREIGN_SEMAPHORE).
   */
  layout?: Layout;
}

/** What a semaphore's acquire events name (see diagnostics.ts). */
type SemaphoreFacts = { lockPath: string; kind: 'semaphore'; layout: Layout };

/**
 * Up to `maxLeases` holders at once, in Curator's InterProcessSemaphoreV2 layout: waiters queue
 * on a fair lock at `<path>/locks`; only the head of that queue watches `<path>/leases` for a
 * free slot, so one release wakes one waiter; a lease is an ephemeral node under `<path>/leases`.
 * In kazoo's layout (`layout: 'kazoo'`) the same, with the queue at `<path>-__lock__` and the
 * leases as `<path>`'s own children, which kazoo's Semaphore counts, and so do we.
 * The limit is recorded in `<path>`'s data, so contenders with another limit fail (lease-limit.ts).
 */
export class Semaphore {
  private readonly queue: Mutex;
  private readonly leasesPath: string;
  private readonly traceFacts: SemaphoreFacts;
  private readonly layout: Layout;
  /** Makes the head's lease nodes and leaves the queue (semaphore-leases.ts). */
  private readonly leases: SemaphoreLeases;

  constructor(
    private readonly client: ZooKeeperClient,
    readonly path: string,
    readonly maxLeases: number,
    private readonly options: SemaphoreOptions = {},
  ) {
    validatePath(path, 'semaphore');
    if (!Number.isInteger(maxLeases) || maxLeases < 1) {
      throw new LockError('INVALID_ARGUMENT', `a semaphore needs a whole number of leases >= 1, got ${String(maxLeases)}`, { path, op: 'semaphore' });
    }
    checkSafetyMargin(options, path, 'semaphore');
    // Its events would be the semaphore's own told twice: traced is the semaphore's acquire alone.
    this.layout = options.layout ?? 'curator';
    if (this.layout !== 'curator' && this.layout !== 'kazoo') {
      throw new LockError('INVALID_ARGUMENT', `layout must be 'curator' or 'kazoo', got ${String(this.layout)}`, { path, op: 'semaphore' });
    }
    const kazoo = this.layout === 'kazoo';
    const queueOptions: LockOptions = internalLock({ ownerId: options.ownerId, layout: this.layout, acl: options.acl });
    this.queue = new Mutex(client, kazoo ? `${path}-__lock__` : joinPath(path, 'locks'), queueOptions);
    this.leasesPath = kazoo ? path : joinPath(path, 'leases');
    this.traceFacts = { lockPath: path, kind: 'semaphore', layout: this.layout };
    this.leases = new SemaphoreLeases(client, path, this.leasesPath, this.layout, options);
  }

  /**
   * Waits for a lease; with `leases: k`, for k leases at once, all or none, as one MultiLease
   * (released together). When the session expires while waiting, queues again with the new
   * session while the deadline allows. INVALID_ARGUMENT at once for a k that is not a whole
   * number from 1 to `maxLeases` (more could never be had); LEASE_LIMIT_MISMATCH when the path
   * records another limit (see lease-limit.ts).
   */
  acquire(options: AcquireOptions & { leases: number }): Promise<MultiLease>;
  acquire(options?: AcquireOptions & { leases?: undefined }): Promise<Lease>;
  acquire(options: AcquireOptions & { leases?: number } = {}): Promise<Lease | MultiLease> {
    return lockTraced() ? traceAcquire(this.traceFacts, () => this.acquireNow(options)) : this.acquireNow(options);
  }

  private async acquireNow(options: AcquireOptions & { leases?: number }): Promise<Lease | MultiLease> {
    const count = this.leaseCount(options.leases, 'acquire');
    checkSafetyMargin(this.options, this.path, 'acquire', this.client);
    const deadline = new Deadline(options, this.path, 'acquire');
    try {
      for (;;) {
        try {
          const leases = await this.attempt(deadline, true, count ?? 1);
          if (leases) return await handOutLeases(leases, count, options, deadline);
        } catch (error) {
          // Our place went with the session: queue again, unless no new session can come.
          if (!(error instanceof ZooKeeperError) || error.code !== 'SESSIONEXPIRED' || deadline.expired || this.client.terminated) throw error;
        }
      }
    } catch (error) {
      throw deadline.failure(error);
    } finally {
      deadline.dispose();
    }
  }

  /**
   * A lease (with `leases: k`, k leases) if that many slots are free now and nobody queues for
   * one, else null; leaves no node when it returns null. What a timeout of 0 cannot mean
   * (`acquire` refuses it): a zero deadline would refuse even the round trips of creating a missing path.
   */
  tryAcquire(options: TryAcquireOptions & { leases: number }): Promise<MultiLease | null>;
  tryAcquire(options?: TryAcquireOptions & { leases?: undefined }): Promise<Lease | null>;
  tryAcquire(options: TryAcquireOptions & { leases?: number } = {}): Promise<Lease | MultiLease | null> {
    return lockTraced() ? traceAcquire(this.traceFacts, () => this.tryAcquireNow(options)) : this.tryAcquireNow(options);
  }

  private async tryAcquireNow(options: TryAcquireOptions & { leases?: number }): Promise<Lease | MultiLease | null> {
    const count = this.leaseCount(options.leases, 'tryAcquire');
    checkSafetyMargin(this.options, this.path, 'tryAcquire', this.client);
    const hold = tryOnly(options, this.path);
    const deadline = new Deadline(hold, this.path, 'tryAcquire');
    const session = this.client.sessionId;
    try {
      const leases = await this.attempt(deadline, false, count ?? 1);
      return leases && (await handOutLeases(leases, count, hold, deadline));
    } catch (error) {
      // Our queue node went while the session lives (an operator deleted it): this try's turn is
      // lost, and someone else may be at the head now — the lock is not available, as a
      // Mutex.tryAcquire answers then (acquire queues again instead). attempt() left no node.
      // A session that really ended (its id is 0n, or a new one) still rejects with SESSIONEXPIRED.
      if (error instanceof ZooKeeperError && placeLost.has(error) && !deadline.expired && session !== 0n && this.client.sessionId === session) return null;
      throw deadline.failure(error);
    } finally {
      deadline.dispose();
    }
  }

  async runExclusive<T>(fn: (lease: Lease) => Promise<T> | T, options: AcquireOptions = {}): Promise<T> {
    const lease = await this.acquire(options);
    try {
      return await fn(lease);
    } finally {
      await releaseQuietly(lease);
    }
  }

  /** Who holds a lease, in the order they took them, with their owner where the holder wrote one (Curator's getParticipantNodes, kazoo's lease_holders). */
  async leaseHolders(): Promise<ContenderInfo[]> {
    return this.layout === 'kazoo' ? kazooLeaseHolders(this.client, this.path) : leaseHoldersOf(this.client, this.path);
  }

  /** The lease holders (`holders`) and the queue for leases (`waiters`, its head first); nobody when the path does not exist. */
  async participants(): Promise<LockState> {
    return this.layout === 'kazoo' ? kazooSemaphoreOf(this.client, this.path) : participantsOf(this.client, this.path, 'semaphore');
  }

  private leaseCount(leases: number | undefined, op: string): number | undefined {
    if (leases === undefined || (Number.isInteger(leases) && leases >= 1 && leases <= this.maxLeases)) return leases;
    throw new LockError('INVALID_ARGUMENT', `leases must be a whole number from 1 to ${this.maxLeases}, got ${String(leases)}`, { path: this.path, op });
  }

  /**
   * One turn at the head of the queue: `count` leases, or null (and no node) when `wait` is false
   * and they are not free. The head keeps the queue until it has all of them, so nobody behind
   * takes a slot meanwhile (Curator's acquire(qty) queues once per lease, and two of them can
   * each hold part of what the other waits for).
   */
  private async attempt(deadline: Deadline, wait: boolean, count: number): Promise<Lease[] | null> {
    let queueLease: Lease | null = null;
    let leases: Lease[] | null = null;
    let counted!: (children: number) => void;
    const ourChildren = new Promise<number>((resolve) => (counted = resolve));
    try {
      queueLease = wait ? await this.queue.acquire({ signal: deadline.signal }) : await this.queue.tryAcquire({ signal: deadline.requestSignal });
      if (!queueLease) return null;
      // Sent before the first count of the leases, so both come back in one round trip; the count
      // tells the check which of our two children (locks/, leases/) the path has (see lease-limit.ts).
      const limitChecked = verifyLeaseLimit(this.client, this.path, this.maxLeases, queueLease.sessionId, deadline, ourChildren, this.layout === 'kazoo');
      limitChecked.catch(() => undefined);
      const free = await this.waitForSlots(deadline, wait, queueLease, count, limitChecked, counted);
      await limitChecked;
      if (free === 'listed' && wait) {
        // From here takeLeases answers for our queue node, whatever happens.
        const queueNode = queueLease;
        queueLease = null;
        leases = await this.leases.takeLeases(deadline, queueNode, count);
      } else if (free) leases = await this.leases.createLeases(deadline, queueLease, count);
    } finally {
      // Failed before the count: the check has nothing left to decide.
      counted(Infinity);
      if (queueLease) await this.leases.leaveQueue(deadline, queueLease, leases);
    }
    return leases;
  }

  /**
   * We head the queue: wait until `count` more leases fit under `maxLeases`, then the caller
   * creates ours. Only the queue's head creates lease nodes and holders only delete theirs, so the
   * count cannot grow meanwhile; creating only then keeps a waiter's node out of `leases/`, where
   * inspection would count it as a holder. Waits for no change before the limit is verified (a
   * contender with the wrong limit should fail, not wait). False (not waiting) when `wait` is
   * false and the slots are not free.
   */
  private async waitForSlots(deadline: Deadline, wait: boolean, queueLease: Lease, count: number, limitChecked: Promise<void>, counted: (children: number) => void): Promise<boolean | 'listed'> {
    // A count sets no watch unless the one before found no slot free: the first count and the one
    // after a holder went mostly find one, and a watch set then would have to be removed (a
    // request) or would fire at our own create. A count that finds none free is made again,
    // watched, before we wait: a slot freed since the first count is seen by the second.
    let watching = false;
    for (;;) {
      deadline.check();
      if (!queueLease.held) throw sessionLost(this.path);
      let onChange!: (event: WatchEvent) => void;
      const changed = new Promise<WatchEvent>((resolve) => (onChange = resolve));
      const watcher = (event: WatchEvent): void => onChange(event);
      let children: string[];
      try {
        ({ children } = await deadline.race(this.client.getChildren(this.leasesPath, watching ? { watch: watcher } : {})));
      } catch (error) {
        // The deadline may have passed with the request in flight: its watch must not outlive us.
        this.client.removeWatcher(this.leasesPath, watcher).catch(() => undefined);
        if (!(error instanceof ZooKeeperError)) throw error;
        if (error.code === 'NONODE') {
          // No leases/ (yet, or reaped): locks/ is our only child. (In kazoo's layout the path itself is gone: nothing to check.)
          counted(this.layout === 'kazoo' ? Infinity : 1);
          return true;
        }
        if (!isTransient(error)) throw error;
        await awaitSession(this.client, queueLease.sessionId, deadline);
        continue;
      }
      if (this.layout === 'kazoo') {
        // The listing is of the path itself: its children tell the other layout at once.
        counted(Infinity);
        try {
          refuseLayout(this.path, 'kazoo', children);
        } catch (error) {
          this.client.removeWatcher(this.leasesPath, watcher).catch(() => undefined);
          throw error;
        }
      } else counted(2);
      const free = children.length + count <= this.maxLeases;
      if (free || !wait) {
        if (watching) this.client.removeWatcher(this.leasesPath, watcher).catch(() => undefined);
        return free && 'listed';
      }
      if (!watching) {
        watching = true;
        await limitChecked;
        continue;
      }
      try {
        await limitChecked;
        const event = await deadline.race(changed);
        if (event.type === 'closed') throw new ZooKeeperError('CLOSED', 'client closed while waiting for a lease', { path: this.path, op: 'acquire' });
        // A child of leases/ changed since our watched count of `children.length`: while we head
        // the queue, only deletions can (only the head creates lease nodes, Curator's head too;
        // holders only delete theirs), so at most one fewer stand, and when one fewer makes room
        // no count is needed. That we still head the queue when our leases are made is checked
        // by the transaction itself (takeLeases). Not in kazoo's layout, whose listing is of the
        // path itself, where another layout's contender may create a child (see refuseLayout).
        if (event.type === 'childrenChanged' && this.layout === 'curator' && children.length - 1 + count <= this.maxLeases) return 'listed';
        // Fired, so no watch is left: the next count most likely finds a slot.
        watching = false;
      } catch (error) {
        this.client.removeWatcher(this.leasesPath, watcher).catch(() => undefined);
        throw error;
      }
    }
  }
}

/** The lease, or with `leases: k` the MultiLease, handed out (see handOut: one hold bound for the whole set). */
function handOutLeases(leases: Lease[], count: number | undefined, hold: HoldOptions, deadline: Deadline): Promise<Lease | MultiLease> {
  return handOut(count === undefined ? leases[0]! : new MultiLease(leases), hold, deadline);
}
