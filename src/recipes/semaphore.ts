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
          return await this.attempt(deadline);
        } catch (error) {
          if (!(error instanceof ZooKeeperError) || error.code !== 'SESSIONEXPIRED' || deadline.expired) throw error;
        }
      }
    } catch (error) {
      throw deadline.expired ? (deadline.signal.reason as Error) : error;
    } finally {
      deadline.dispose();
    }
  }

  private async attempt(deadline: Deadline): Promise<Lease> {
    let queueLease: Lease | undefined;
    try {
      queueLease = await this.queue.acquire({ signal: deadline.signal });
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
      try {
        await this.waitForSlot(node.name, deadline);
      } catch (error) {
        await deleteGuaranteed(this.client, node.path, node.stat.ephemeralOwner);
        throw error;
      }
      return new Lease(this.client, this.path, node.path, node.stat, this.options);
    } finally {
      if (queueLease) await releaseQuietly(queueLease);
    }
  }

  /** A lease if a slot is free now, else null; leaves no node when it returns null. */
  async tryAcquire(): Promise<Lease | null> {
    try {
      return await this.acquire({ timeout: 0 });
    } catch (error) {
      if (error instanceof LockError && error.code === 'LOCK_TIMEOUT') return null;
      throw error;
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

  /** We head the queue: wait until our lease node is among the first `maxLeases` (at most maxLeases leases exist then). */
  private async waitForSlot(ourName: string, deadline: Deadline): Promise<void> {
    for (;;) {
      deadline.check();
      let onChange!: (event: WatchEvent) => void;
      const changed = new Promise<WatchEvent>((resolve) => (onChange = resolve));
      const watcher = (event: WatchEvent): void => onChange(event);
      const { children } = await deadline.race(this.client.getChildren(this.leasesPath, { watch: watcher }));
      if (!children.includes(ourName)) throw new ZooKeeperError('SESSIONEXPIRED', 'our lease node is gone', { path: this.leasesPath, op: 'acquire', zkCode: -112 });
      if (children.length <= this.maxLeases) {
        this.client.removeWatcher(this.leasesPath, watcher).catch(() => undefined);
        return;
      }
      try {
        const event = await deadline.race(changed);
        this.options.onWake?.();
        if (event.type === 'expired' || event.type === 'closed') throw new ZooKeeperError(event.type === 'closed' ? 'CLOSED' : 'SESSIONEXPIRED', `session ${event.type} while waiting for a lease`, { path: this.path, op: 'acquire' });
      } catch (error) {
        this.client.removeWatcher(this.leasesPath, watcher).catch(() => undefined);
        throw error;
      }
    }
  }
}
