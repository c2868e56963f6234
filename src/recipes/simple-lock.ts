import type { Stat, ZooKeeperClient } from '../client/index.js';
import { ZooKeeperError, parentOf, validatePath } from '../client/index.js';
import type { AcquireOptions } from './deadline.js';
import { Deadline } from './deadline.js';
import { Lease } from './lease.js';
import type { LeaseMonitorOptions } from './lease-monitor.js';
import { ownerData } from './owner-data.js';

export interface SimpleLockOptions extends LeaseMonitorOptions {
  ownerId?: string;
}

/**
 * The single-node lock: `path` itself is an EPHEMERAL node whose data names the owner.
 * `tryAcquire` answers correctly even when the connection dropped during the create (the node may
 * be ours: its owner session decides). `acquire` watches the node, so every waiter wakes when it
 * goes (a herd, by design of this recipe): use {@link Mutex} for fair, herd-free queueing.
 */
export class SimpleLock {
  constructor(
    private readonly client: ZooKeeperClient,
    readonly path: string,
    private readonly options: SimpleLockOptions = {},
  ) {
    validatePath(path, 'lock');
    if (path === '/') throw new ZooKeeperError('INVALID_PATH', 'the root cannot be a lock node', { path, op: 'lock' });
  }

  /** The lock if free now, else null. Never waits for the lock; leaves no node when it returns null. */
  async tryAcquire(): Promise<Lease | null> {
    const deadline = new Deadline({}, this.path, 'tryAcquire');
    try {
      return await this.attempt(deadline);
    } finally {
      deadline.dispose();
    }
  }

  async acquire(options: AcquireOptions = {}): Promise<Lease> {
    const deadline = new Deadline(options, this.path, 'acquire');
    try {
      for (;;) {
        const lease = await this.attempt(deadline);
        if (lease) return lease;
        await this.waitForRelease(deadline);
      }
    } finally {
      deadline.dispose();
    }
  }

  private async attempt(deadline: Deadline): Promise<Lease | null> {
    const { client } = this;
    for (;;) {
      deadline.check();
      try {
        const { stat } = await client.create(this.path, ownerData(this.options.ownerId), { mode: 'EPHEMERAL' });
        return this.lease(stat);
      } catch (error) {
        if (!(error instanceof ZooKeeperError)) throw error;
        if (error.code === 'NONODE') {
          await deadline.race(client.ensurePath(parentOf(this.path), { container: true }));
          continue;
        }
        if (error.code === 'CONNECTIONLOSS') {
          await deadline.race(client.waitForConnected({ timeout: Math.max(client.sessionTimeout, 1000) * 2 }));
          await client.sync(this.path);
        } else if (error.code !== 'NODEEXISTS') {
          throw error;
        }
        // NODEEXISTS, or unknown outcome: the node's owner session tells whether it is ours.
        const stat = await client.exists(this.path);
        if (!stat) continue;
        return stat.ephemeralOwner === client.sessionId ? this.lease(stat) : null;
      }
    }
  }

  private lease(stat: Stat): Lease {
    // The node's name is not unique to us: release must check it is still the node we created.
    return new Lease(this.client, this.path, this.path, stat, { ...this.options, verifyBeforeDelete: true });
  }

  private waitForRelease(deadline: Deadline): Promise<void> {
    return deadline.race(
      new Promise<void>((resolve, reject) => {
        this.client.exists(this.path, { watch: () => resolve(), signal: deadline.signal }).then((stat) => {
          if (!stat) resolve();
        }, reject);
      }),
    );
  }
}
