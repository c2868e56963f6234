import type { WatchEvent, ZooKeeperClient } from '../../client/index.js';
import { ZooKeeperError, joinPath, validatePath } from '../../client/index.js';
import { giveUp } from '../support/abandon.js';
import { createProtected } from '../queue/contender-queue.js';
import { randomUUID } from 'node:crypto';
import type { ContenderInfo, LockState } from '../inspect.js';
import { kazooLeaseHolders, kazooSemaphoreOf, leaseHoldersOf, participantsOf } from '../inspect.js';
import { refuseLayout, verifyLeaseLimit } from './lease-limit.js';
import { MultiLease, releaseAll } from './multi-lock.js';
import type { AcquireOptions, TryAcquireOptions } from '../support/deadline.js';
import { Deadline, tryOnly } from '../support/deadline.js';
import type { HoldOptions } from '../lease/hold-limit.js';
import { handOut } from '../lease/hand-out.js';
import { deleteGuaranteed } from '../support/guaranteed-delete.js';
import { Lease } from '../lease/lease.js';
import type { LeaseMonitorOptions } from '../lease/lease-monitor.js';
import type { Layout } from '../queue/contender-name.js';
import { LockError } from '../support/lock-error.js';
import type { LockOptions } from './mutex.js';
import { Mutex, releaseQuietly } from './mutex.js';
import { ownerData } from '../support/owner-data.js';
import { awaitSession } from '../support/reconnect.js';
import { isTransient } from '../support/transient.js';
import { checkSafetyMargin, safetyMargin } from '../lease/lease-monitor.js';
import { proveFresh } from '../lease/session-liveness.js';
import { internalLock, lockTraced, traceAcquire } from '../diagnostics.js';
import type { AclOptions } from '../support/lock-acl.js';

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
    try {
      const leases = await this.attempt(deadline, false, count ?? 1);
      return leases && (await handOutLeases(leases, count, hold, deadline));
    } catch (error) {
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
      leases = free ? await this.createLeases(deadline, queueLease, count) : null;
    } finally {
      // Failed before the count: the check has nothing left to decide.
      counted(Infinity);
      if (queueLease) await this.leaveQueue(deadline, queueLease, leases);
    }
    return leases;
  }

  /**
   * Deletes our queue node, waiting for it no longer than the deadline allows (see giveUp). When
   * that fails, the acquire fails with its error and the leases just made are released first:
   * nobody would hold them.
   */
  private async leaveQueue(deadline: Deadline, queueLease: Lease, leases: readonly Lease[] | null): Promise<void> {
    try {
      await giveUp(this.client, releaseQuietly(queueLease), deadline);
    } catch (error) {
      if (leases) await giveUp(this.client, releaseAll(leases), deadline).catch(() => undefined);
      throw error;
    }
  }

  /**
   * `count` lease nodes, created together on the session of our queue node (on another, we would
   * no longer head the queue); if any fails, those made are deleted (see giveUp) before the
   * failure is passed on.
   */
  private async createLeases(deadline: Deadline, queueLease: Lease, count: number): Promise<Lease[]> {
    const data = ownerData(this.options.ownerId);
    const name = (): { prefix: string; protectionId: string } => {
      const uuid = randomUUID();
      return { prefix: `_c_${uuid}-lease-`, protectionId: uuid };
    };
    const session = queueLease.sessionId;
    // kazoo's Semaphore lists its path without making it again once it has: a container the server reaped would fail it.
    const container = this.layout !== 'kazoo';
    const results = await Promise.allSettled(Array.from({ length: count }, () => createProtected(this.client, this.leasesPath, name, data, deadline, { session, list: false, container, acl: this.options.acl })));
    const nodes = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    try {
      const failure = results.find((result) => result.status === 'rejected');
      if (failure) throw failure.reason;
      // Our queue node went (an admin deleted it): another head may count a slot for itself too.
      if (!queueLease.held) throw sessionLost(this.path);
      await proveFresh(this.client, safetyMargin(this.client, this.options), deadline, nodes[0]!.path, this.options.acl);
    } catch (error) {
      await giveUp(this.client, Promise.all(nodes.map((node) => deleteGuaranteed(this.client, node.path, node.stat.ephemeralOwner))), deadline);
      throw error;
    }
    return nodes.map((node) => new Lease(this.client, this.path, node.path, node.stat, this.options));
  }

  /**
   * We head the queue: wait until `count` more leases fit under `maxLeases`, then the caller
   * creates ours. Only the queue's head creates lease nodes and holders only delete theirs, so the
   * count cannot grow meanwhile; creating only then keeps a waiter's node out of `leases/`, where
   * inspection would count it as a holder. Waits for no change before the limit is verified (a
   * contender with the wrong limit should fail, not wait). False (not waiting) when `wait` is
   * false and the slots are not free.
   */
  private async waitForSlots(deadline: Deadline, wait: boolean, queueLease: Lease, count: number, limitChecked: Promise<void>, counted: (children: number) => void): Promise<boolean> {
    for (;;) {
      deadline.check();
      if (!queueLease.held) throw sessionLost(this.path);
      let onChange!: (event: WatchEvent) => void;
      const changed = new Promise<WatchEvent>((resolve) => (onChange = resolve));
      const watcher = (event: WatchEvent): void => onChange(event);
      let children: string[];
      try {
        ({ children } = await deadline.race(this.client.getChildren(this.leasesPath, { watch: watcher })));
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
        this.client.removeWatcher(this.leasesPath, watcher).catch(() => undefined);
        return free;
      }
      try {
        await limitChecked;
        const event = await deadline.race(changed);
        if (event.type === 'closed') throw new ZooKeeperError('CLOSED', 'client closed while waiting for a lease', { path: this.path, op: 'acquire' });
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

/** Our place at the head of the queue went with the session (or an admin): queue again. */
function sessionLost(path: string): ZooKeeperError {
  return new ZooKeeperError('SESSIONEXPIRED', 'the queue node we held is gone', { path, op: 'acquire' });
}
