import type { Stat, ZooKeeperClient } from '../client/index.js';
import { ZooKeeperError, parentOf, validatePath } from '../client/index.js';
import type { AcquireOptions } from './deadline.js';
import { Deadline } from './deadline.js';
import { Lease } from './lease.js';
import type { LeaseMonitorOptions } from './lease-monitor.js';
import { ownerData } from './owner-data.js';
import { awaitSession } from './reconnect.js';

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
        if (error.code !== 'NODEEXISTS' && error.code !== 'CONNECTIONLOSS') throw error;
        // NODEEXISTS, or an unknown outcome: the node's owner session tells whether it is ours.
        const stat = error.code === 'NODEEXISTS' ? await client.exists(this.path) : await this.statAfterConnectionLoss(deadline);
        if (!stat) continue;
        return stat.ephemeralOwner === client.sessionId ? this.lease(stat) : null;
      }
    }
  }

  /** The node's Stat once we can read it again, on a server that has seen our create if it ran. */
  private async statAfterConnectionLoss(deadline: Deadline): Promise<Stat | null> {
    const { client } = this;
    const session = client.sessionId;
    for (;;) {
      await awaitSession(client, session, deadline);
      try {
        await client.sync(this.path);
        return await client.exists(this.path);
      } catch (error) {
        if (!(error instanceof ZooKeeperError) || (error.code !== 'CONNECTIONLOSS' && error.code !== 'TIMEOUT')) throw error;
        deadline.check();
      }
    }
  }

  private lease(stat: Stat): Lease {
    // The node's name is not unique to us: release must check it is still the node we created.
    return new Lease(this.client, this.path, this.path, stat, { ...this.options, verifyBeforeDelete: true });
  }

  /** Resolves when the node may be free: deleted, changed, or unknown after a connection loss (the caller tries again). */
  private async waitForRelease(deadline: Deadline): Promise<void> {
    const { client } = this;
    const session = client.sessionId;
    try {
      await deadline.race(
        new Promise<void>((resolve, reject) => {
          client.exists(this.path, { watch: () => resolve(), signal: deadline.signal }).then((stat) => {
            if (!stat) resolve();
          }, reject);
        }),
      );
    } catch (error) {
      if (!(error instanceof ZooKeeperError) || (error.code !== 'CONNECTIONLOSS' && error.code !== 'TIMEOUT')) throw error;
      await awaitSession(client, session, deadline);
    }
  }
}
