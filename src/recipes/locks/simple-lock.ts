import { randomUUID } from 'node:crypto';
import type { Stat, ZooKeeperClient } from '../../client/index.js';
import { ZooKeeperError, parentOf, validatePath } from '../../client/index.js';
import { abandon, giveUp } from '../support/abandon.js';
import type { AcquireOptions, TryAcquireOptions } from '../support/deadline.js';
import { Deadline, tryOnly } from '../support/deadline.js';
import { handOut } from '../lease/hand-out.js';
import { deleteGuaranteed } from '../support/guaranteed-delete.js';
import { Lease } from '../lease/lease.js';
import type { LeaseMonitorOptions } from '../lease/lease-monitor.js';
import type { LockState } from '../inspect.js';
import { simpleLockState } from '../inspect.js';
import { attemptOf, ownerData } from '../support/owner-data.js';
import { awaitSession, ensureLockPath, sessionForCreate } from '../support/reconnect.js';
import { createMayHaveRun, isTransient } from '../support/transient.js';
import { checkSafetyMargin, safetyMargin } from '../lease/lease-monitor.js';
import { proveFresh } from '../lease/session-liveness.js';
import { lockTraced, traceAcquire } from '../diagnostics.js';
import type { AclOptions } from '../support/lock-acl.js';
import { nodeAcl, pathAcl } from '../support/lock-acl.js';

export interface SimpleLockOptions extends LeaseMonitorOptions, AclOptions {
  ownerId?: string;
}

/** One tryAcquire or acquire call. Its random id, in its node's data, tells its node from any other, of our session or not. */
interface Attempt {
  id: string;
  data: Buffer;
  deadline: Deadline;
}

/** The node at the lock path, and whether the attempt looking made it. */
interface Found {
  stat: Stat;
  ours: boolean;
}

/**
 * The single-node lock: `path` itself is an EPHEMERAL node whose data names the owner and the
 * acquisition attempt. A node is ours only if this attempt made it: callers on one client share
 * its session, so a node of our session made by another call means "taken", like anyone else's.
 * `tryAcquire` answers correctly even when the connection dropped during the create. `acquire`
 * watches the node, so every waiter wakes when it goes (a herd, by design of this recipe): use
 * {@link Mutex} for fair, herd-free queueing. Its leases refuse `guard()` (see Lease.guard).
 */
export class SimpleLock {
  constructor(
    private readonly client: ZooKeeperClient,
    readonly path: string,
    private readonly options: SimpleLockOptions = {},
  ) {
    validatePath(path, 'lock');
    if (path === '/') throw new ZooKeeperError('INVALID_PATH', 'the root cannot be a lock node', { path, op: 'lock' });
    checkSafetyMargin(options, path, 'lock');
  }

  /** The lock if free now, else null. Never waits for the lock; leaves no node when it returns null. */
  tryAcquire(options: TryAcquireOptions = {}): Promise<Lease | null> {
    return lockTraced() ? traceAcquire({ lockPath: this.path, kind: 'simple' }, () => this.tryAcquireNow(options)) : this.tryAcquireNow(options);
  }

  private async tryAcquireNow(options: TryAcquireOptions): Promise<Lease | null> {
    const hold = tryOnly(options, this.path);
    checkSafetyMargin(this.options, this.path, 'tryAcquire', this.client);
    const attempt = this.begin(new Deadline(hold, this.path, 'tryAcquire'));
    try {
      const lease = await this.attempt(attempt);
      return lease && (await handOut(lease, hold, attempt.deadline));
    } catch (error) {
      throw attempt.deadline.failure(error);
    } finally {
      attempt.deadline.dispose();
    }
  }

  acquire(options: AcquireOptions = {}): Promise<Lease> {
    return lockTraced() ? traceAcquire({ lockPath: this.path, kind: 'simple' }, () => this.acquireNow(options)) : this.acquireNow(options);
  }

  private async acquireNow(options: AcquireOptions): Promise<Lease> {
    checkSafetyMargin(this.options, this.path, 'acquire', this.client);
    const attempt = this.begin(new Deadline(options, this.path, 'acquire'));
    try {
      for (;;) {
        const lease = await this.attempt(attempt);
        if (lease) return await handOut(lease, options, attempt.deadline);
        await this.waitForRelease(attempt.deadline);
      }
    } finally {
      attempt.deadline.dispose();
    }
  }

  private begin(deadline: Deadline): Attempt {
    // One id per call, not per create: a create of this call that ran late is still ours to adopt.
    const id = randomUUID();
    return { id, data: ownerData(this.options.ownerId, { attempt: id }), deadline };
  }

  private async attempt(attempt: Attempt): Promise<Lease | null> {
    const { client } = this;
    const { deadline } = attempt;
    for (;;) {
      deadline.check();
      // The session the create runs on (see sessionForCreate): a lost or abandoned create is looked for there.
      const session = await sessionForCreate(client, deadline);
      let found: Found | null;
      try {
        // Bounded by the deadline: a create queued while disconnected must not outlive the acquire.
        return await this.lease(await this.create(attempt), deadline);
      } catch (error) {
        if (!(error instanceof ZooKeeperError)) throw error;
        if (error.code === 'NONODE') {
          await ensureLockPath(client, parentOf(this.path), { container: true, acl: pathAcl(this.options.acl) }, deadline);
          continue;
        }
        if (error.code === 'NODEEXISTS') found = await this.look(attempt, false);
        else if (createMayHaveRun(error)) found = await this.afterLostCreate(attempt, session);
        else throw error;
      }
      // No node: free again (or our create never ran), create again.
      if (found) return found.ours ? await this.lease(found.stat, deadline) : null;
    }
  }

  /**
   * Creates our node already at data version 1: a create and a setData of it in one transaction
   * (one request, one zxid), so it never exists at version 0. A namesake made by a plain create
   * (kazoo, Curator, an older zklock, an operator) is at version 0 when born, and release's
   * versioned delete cannot remove it (see Lease.release; NONODE and NODEEXISTS come as before,
   * from the create, op 0).
   */
  private async create(attempt: Attempt): Promise<Stat> {
    const { path } = this;
    const signal = attempt.deadline.requestSignal;
    // Born empty within the transaction, so the data goes once, in the setData.
    const acl = nodeAcl(this.client, this.options.acl, path);
    const [, written] = await this.client.multi([{ op: 'create', path, mode: 'EPHEMERAL', acl }, { op: 'setData', path, data: attempt.data, version: 0 }], { signal });
    return (written as { op: 'setData'; stat: Stat }).stat;
  }

  /** The create's outcome is unknown: find its node once we can; when we give up, make sure it goes. */
  private async afterLostCreate(attempt: Attempt, session: bigint): Promise<Found | null> {
    try {
      attempt.deadline.check();
      return await this.look(attempt, true);
    } catch (failure) {
      await abandon(this.client, session, this.path, async () => {
        const found = await this.read(attempt, session);
        return found?.ours ? { path: this.path, czxid: found.stat.czxid } : undefined;
      });
      throw failure;
    }
  }

  /** The node at our path (null: none), read again across connection losses within the deadline. */
  private async look(attempt: Attempt, afterLoss: boolean): Promise<Found | null> {
    const { client } = this;
    const { deadline } = attempt;
    for (;;) {
      await awaitSession(client, client.sessionId, deadline);
      try {
        // After a lost reply the session may have moved to a server that has not seen our create yet.
        if (afterLoss) await client.sync(this.path, { signal: deadline.requestSignal });
        return await this.read(attempt, client.sessionId, deadline.requestSignal);
      } catch (error) {
        deadline.check();
        if (!isTransient(error)) throw error;
      }
    }
  }

  /** The node at our path (null: none), and whether `attempt` made it in session `session`. */
  private async read(attempt: Attempt, session: bigint, signal?: AbortSignal): Promise<Found | null> {
    try {
      const { data, stat } = await this.client.getData(this.path, { signal });
      return { stat, ours: stat.ephemeralOwner === session && attemptOf(data) === attempt.id };
    } catch (error) {
      if (error instanceof ZooKeeperError && error.code === 'NONODE') return null;
      throw error;
    }
  }

  private async lease(stat: Stat, deadline: Deadline): Promise<Lease> {
    try {
      await proveFresh(this.client, safetyMargin(this.client, this.options), deadline, this.path, this.options.acl);
    } catch (error) {
      // The deadline passed: our node holds the lock, and nobody will. It goes before the rejection, as a waiter's does.
      await giveUp(this.client, deleteGuaranteed(this.client, this.path, stat.ephemeralOwner, { czxid: stat.czxid }), deadline).catch(() => undefined);
      throw error;
    }
    return new Lease(this.client, this.path, this.path, stat, { ...this.options, reusableName: true });
  }

  /** The holder, if any (see simpleLockState: waiters leave no node to list). */
  async participants(): Promise<LockState> {
    return simpleLockState(this.client, this.path);
  }

  /** Resolves when the node may be free: deleted, changed, or unknown after a connection loss (the caller tries again). */
  private async waitForRelease(deadline: Deadline): Promise<void> {
    const { client } = this;
    const session = client.sessionId;
    let fired = false;
    let wake = (): void => undefined;
    const watcher = (): void => {
      fired = true;
      wake();
    };
    try {
      await deadline.race(
        new Promise<void>((resolve, reject) => {
          wake = resolve;
          client.exists(this.path, { watch: watcher, signal: deadline.signal }).then((stat) => {
            if (!stat) resolve();
          }, reject);
        }),
      );
    } catch (error) {
      if (!isTransient(error)) throw error;
      await awaitSession(client, session, deadline);
    } finally {
      // Gone before we looked, or given up: the watch must not stay behind, one per wait.
      if (!fired) client.removeWatcher(this.path, watcher).catch(() => undefined);
    }
  }
}
