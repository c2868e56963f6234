import type { WatchEvent, ZooKeeperClient } from '../client/index.js';
import { ZooKeeperError, joinPath, validatePath } from '../client/index.js';
import { createProtected } from './contender-queue.js';
import { randomUUID } from 'node:crypto';
import type { AcquireOptions } from './deadline.js';
import { Deadline } from './deadline.js';
import { deleteGuaranteed } from './guaranteed-delete.js';
import { Lease } from './lease.js';
import type { LeaseMonitorOptions } from './lease-monitor.js';
import { LockError } from './lock-error.js';
import type { LockOptions } from './mutex.js';
import { Mutex, releaseQuietly } from './mutex.js';
import { ownerData } from './owner-data.js';
import { awaitSession } from './reconnect.js';
import { isTransient } from './transient.js';
import { safetyMargin } from './lease-monitor.js';
import { proveFresh } from './session-liveness.js';

export interface SemaphoreOptions extends LeaseMonitorOptions {
  ownerId?: string;
  /** Called for every watch event a waiter receives (herd measurement). */
  onWake?: () => void;
}

/**
 * Up to `maxLeases` holders at once, in Curator's InterProcessSemaphoreV2 layout: waiters queue
 * on a fair lock at `<path>/locks`; only the head of that queue watches `<path>/leases` for a
 * free slot, so one release wakes one waiter; a lease is an ephemeral node under `<path>/leases`.
 */
export class Semaphore {
  private readonly queue: Mutex;
  private readonly leasesPath: string;

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
    const queueOptions: LockOptions = { ownerId: options.ownerId, onWake: options.onWake };
    this.queue = new Mutex(client, joinPath(path, 'locks'), queueOptions);
    this.leasesPath = joinPath(path, 'leases');
  }

  /** Waits for a lease; when the session expires while waiting, queues again with the new session while the deadline allows. */
  async acquire(options: AcquireOptions = {}): Promise<Lease> {
    const deadline = new Deadline(options, this.path, 'acquire');
    try {
      for (;;) {
        try {
          const lease = await this.attempt(deadline, true);
          if (lease) return lease;
        } catch (error) {
          // Our place went with the session: queue again, unless no new session can come.
          if (!(error instanceof ZooKeeperError) || error.code !== 'SESSIONEXPIRED' || deadline.expired || this.client.terminated) throw error;
        }
      }
    } catch (error) {
      throw deadline.expired ? (deadline.signal.reason as Error) : error;
    } finally {
      deadline.dispose();
    }
  }

  /** With `wait` false: null (and no node left) when the queue is busy or no slot is free. */
  private async attempt(deadline: Deadline, wait: boolean): Promise<Lease | null> {
    let queueLease: Lease | null = null;
    try {
      queueLease = wait ? await this.queue.acquire({ signal: deadline.signal }) : await this.queue.tryAcquire();
      if (!queueLease) return null;
      if (!(await this.waitForSlot(deadline, wait, queueLease))) return null;
      const node = await createProtected(
        this.client,
        this.leasesPath,
        () => {
          const uuid = randomUUID();
          return { prefix: `_c_${uuid}-lease-`, protectionId: uuid };
        },
        ownerData(this.options.ownerId),
        deadline,
      );
      // Created on a newer session than the one heading the queue: another head may count a slot for itself too.
      if (node.stat.ephemeralOwner !== queueLease.sessionId || !queueLease.held) {
        await deleteGuaranteed(this.client, node.path, node.stat.ephemeralOwner);
        throw sessionLost(this.path);
      }
      await proveFresh(this.client, safetyMargin(this.client, this.options), deadline, node.path);
      return new Lease(this.client, this.path, node.path, node.stat, this.options);
    } finally {
      if (queueLease) await releaseQuietly(queueLease);
    }
  }

  /**
   * A lease if a slot is free now and nobody queues for one, else null; leaves no node when it
   * returns null. Not `acquire({ timeout: 0 })`, which would refuse even the round trips of
   * creating a missing path.
   */
  async tryAcquire(): Promise<Lease | null> {
    const deadline = new Deadline({}, this.path, 'tryAcquire');
    try {
      return await this.attempt(deadline, false);
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

  /**
   * We head the queue: wait until fewer than `maxLeases` leases exist, then the caller creates
   * ours. Only the queue's head creates lease nodes and holders only delete theirs, so the count
   * cannot grow meanwhile; creating only then keeps a waiter's node out of `leases/`, where
   * inspection would count it as a holder. False (not waiting) when `wait` is false and no slot is free.
   */
  private async waitForSlot(deadline: Deadline, wait: boolean, queueLease: Lease): Promise<boolean> {
    for (;;) {
      deadline.check();
      if (!queueLease.held) throw sessionLost(this.path);
      let onChange!: (event: WatchEvent) => void;
      const changed = new Promise<WatchEvent>((resolve) => (onChange = resolve));
      // The caller's onWake goes last, inside the watcher, where the client isolates a throw:
      // it cannot keep the wait from settling nor fail the acquire.
      const watcher = (event: WatchEvent): void => {
        onChange(event);
        this.options.onWake?.();
      };
      let children: string[];
      try {
        ({ children } = await deadline.race(this.client.getChildren(this.leasesPath, { watch: watcher })));
      } catch (error) {
        // The deadline may have passed with the request in flight: its watch must not outlive us.
        this.client.removeWatcher(this.leasesPath, watcher).catch(() => undefined);
        if (!(error instanceof ZooKeeperError)) throw error;
        if (error.code === 'NONODE') return true;
        if (!isTransient(error)) throw error;
        await awaitSession(this.client, queueLease.sessionId, deadline);
        continue;
      }
      if (children.length < this.maxLeases || !wait) {
        this.client.removeWatcher(this.leasesPath, watcher).catch(() => undefined);
        return children.length < this.maxLeases;
      }
      try {
        const event = await deadline.race(changed);
        if (event.type === 'closed') throw new ZooKeeperError('CLOSED', 'client closed while waiting for a lease', { path: this.path, op: 'acquire' });
      } catch (error) {
        this.client.removeWatcher(this.leasesPath, watcher).catch(() => undefined);
        throw error;
      }
    }
  }
}

/** Our place at the head of the queue went with the session (or an admin): queue again. */
function sessionLost(path: string): ZooKeeperError {
  return new ZooKeeperError('SESSIONEXPIRED', 'the queue node we held is gone', { path, op: 'acquire' });
}
