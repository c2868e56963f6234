import type { Op, Stat, WatchEvent, ZooKeeperClient } from '../../client/index.js';
import { MultiError, ZooKeeperError, joinPath, validatePath } from '../../client/index.js';
import { abandon, giveUp } from '../support/abandon.js';
import { createProtected } from '../queue/protected-create.js';
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
import type { LeaseMonitorOptions, NodeWatch } from '../lease/lease-monitor.js';
import type { Layout } from '../queue/contender-name.js';
import { LockError } from '../support/lock-error.js';
import type { LockOptions } from './mutex.js';
import { Mutex, releaseQuietly } from './mutex.js';
import { ownerData } from '../support/owner-data.js';
import { awaitSession } from '../support/reconnect.js';
import { createMayHaveRun, isTransient } from '../support/transient.js';
import { checkSafetyMargin, safetyMargin } from '../lease/lease-monitor.js';
import { proveFresh } from '../lease/session-liveness.js';
import { internalLock, lockTraced, traceAcquire } from '../diagnostics.js';
import type { AclOptions } from '../support/lock-acl.js';
import { nodeAcl } from '../support/lock-acl.js';

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
        leases = await this.takeLeases(deadline, queueNode, count);
      } else if (free) leases = await this.createLeases(deadline, queueLease, count);
    } finally {
      // Failed before the count: the check has nothing left to decide.
      counted(Infinity);
      if (queueLease) await this.leaveQueue(deadline, queueLease, leases);
    }
    return leases;
  }

  /**
   * `count` lease nodes and the deletion of our queue node, in one transaction (a multi): one
   * commit where a create and then a delete took two in turn, so the next head starts as soon as
   * our leases exist, and our own hand-out waits for one commit and one read (the Stat a create
   * in a multi does not return, read with the watch our lease's monitor takes over: the read its
   * monitor made at hand-out anyway). Used when our count listed `leases/` and we wait for a
   * slot (acquire); tryAcquire, and a head that found no `leases/`, create and leave in two steps.
   *
   * Why it is as safe as the two steps. The invariant: at most `maxLeases` lease nodes, because
   * only the queue's head creates them (Curator's and kazoo's semaphores too: each creates only
   * while it holds the same queue lock) and holders only delete theirs. In two steps the head
   * counts c leases, creates k (c + k <= maxLeases, nobody else creating meanwhile), then deletes
   * its queue node; the next head becomes head only once that node is gone, so its count comes
   * after our creates and includes them. In one transaction the creates and the delete commit at
   * the same zxid: whoever sees our queue node gone sees our leases, by the same argument. The
   * head is still the head when it commits: the delete of our queue node is part of the
   * transaction, and fails it (nothing applied) if someone else deleted that node first — where
   * the two steps needed a look at the queue lease after the create's reply, and a window
   * between the create and the delete in which an admin's delete went unnoticed.
   * Failures: refused, the transaction applied nothing, so our queue node stands and is deleted
   * as after any turn that made no lease (NONODE on a create: `leases/` went since our count, a
   * reaped container; the two steps make it again). Unknown outcome (connection lost, aborted):
   * both or neither applied; leases found by their protection id are deleted (see abandon) and
   * the queue node too, and we queue again; a lease left over until then is counted as a holder
   * by the next head (a slot lost for a while, never one too many). The session's end takes the
   * queue node and the leases together (all ephemeral). The transaction creates several children
   * of `leases/` in one zxid, never of a queue's parent, so the queue's sole-contender proof
   * (sequence-proof.ts, which counts one create per transaction in the queue's parent) is
   * untouched. Our queue lease is ended with handOver (no request: its watch fired on the
   * transaction's delete), so it leaves no release record (release-record.ts) in `locks/`: a
   * waiter behind then checks its listing instead of taking the record's shortcut.
   */
  private async takeLeases(deadline: Deadline, queueLease: Lease, count: number): Promise<Lease[]> {
    const data = ownerData(this.options.ownerId);
    const names = Array.from({ length: count }, () => randomUUID());
    const creates = names.map((uuid): Op => {
      const path = joinPath(this.leasesPath, `_c_${uuid}-lease-`);
      return { op: 'create', path, data, mode: 'EPHEMERAL_SEQUENTIAL', acl: nodeAcl(this.client, this.options.acl, path) };
    });
    const session = queueLease.sessionId;
    let created: string[];
    try {
      // Heard gone before we send (an admin deleted it): the transaction would fail on it anyway.
      if (!queueLease.held || this.client.sessionId !== session) throw sessionLost(this.path);
      const results = await this.client.multi([...creates, { op: 'delete', path: queueLease.node }], { signal: deadline.requestSignal });
      created = results.slice(0, count).map((result) => (result as { path: string }).path);
    } catch (error) {
      if (error instanceof MultiError && error.failedIndex < count && error.code === 'NONODE') {
        // leases/ went (a reaped container) since our count: made again by the two steps.
        try {
          const leases = await this.createLeases(deadline, queueLease, count);
          await this.leaveQueue(deadline, queueLease, leases);
          return leases;
        } catch (failure) {
          await this.leaveQueue(deadline, queueLease, null).catch(() => undefined);
          throw failure;
        }
      }
      if (error instanceof ZooKeeperError && createMayHaveRun(error)) {
        // Applied or not, unknown: leases found by their protection id are given up, and we queue again.
        await Promise.all(names.map((uuid) => abandon(this.client, session, this.leasesPath, () => this.findLease(uuid))));
        await this.leaveQueue(deadline, queueLease, null).catch(() => undefined);
        deadline.check();
        throw sessionLost(this.path);
      }
      // Refused (our queue node went, NOAUTH, ...): nothing was applied, our queue node is left as after any failed turn.
      await this.leaveQueue(deadline, queueLease, null);
      throw error instanceof MultiError && error.failedIndex === count && error.code === 'NONODE' ? sessionLost(this.path) : error;
    }
    // Deleted by our transaction: the queue's lease ends without a request of its own (its watch fired on the delete).
    queueLease.handOver();
    const nodes: { path: string; stat: Stat; watched: NodeWatch }[] = [];
    try {
      // The Stat (the fencing token is its czxid) that a create in a multi does not return, with the watch the lease's monitor takes over.
      for (const [i, watched] of (await Promise.all(created.map((path) => watchCreated(this.client, path, session, deadline)))).entries()) {
        // Deleted already (by an admin): no lease, and we queue again.
        if (!watched.stat) throw sessionLost(this.path);
        nodes.push({ path: created[i]!, stat: watched.stat, watched: watched.watch });
      }
      await proveFresh(this.client, safetyMargin(this.client, this.options), deadline, created[0]!, this.options.acl);
    } catch (error) {
      await giveUp(this.client, Promise.all(created.map((path) => deleteGuaranteed(this.client, path, session))), deadline);
      throw error;
    }
    return nodes.map((node) => new Lease(this.client, this.path, node.path, node.stat, this.options, { watched: node.watched }));
  }

  /** Our lease node named with protection id `uuid`, if it exists (after a transaction whose outcome we never learned). */
  private async findLease(uuid: string): Promise<{ path: string } | undefined> {
    const name = (await this.client.getChildren(this.leasesPath)).children.find((child) => child.includes(uuid));
    return name === undefined ? undefined : { path: joinPath(this.leasesPath, name) };
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

/**
 * `path`'s Stat (null when it is gone), read with an exists whose watch a lease's monitor can
 * take over (see NodeWatch): set from this read on, so a deletion after it is heard. Tried
 * again on the same session while the connection is lost, within the deadline.
 */
async function watchCreated(client: ZooKeeperClient, path: string, session: bigint, deadline: Deadline): Promise<{ stat: Stat | null; watch: NodeWatch }> {
  let armed = false;
  let fired = false;
  let adopter: ((event: WatchEvent) => void) | undefined;
  const watcher = (event: WatchEvent): void => {
    armed = false;
    fired = true;
    adopter?.(event);
  };
  const watch: NodeWatch = {
    adopt: (next) => {
      if (!armed) return false;
      adopter = next;
      return true;
    },
  };
  for (;;) {
    deadline.check();
    try {
      const stat = await client.exists(path, { watch: watcher, signal: deadline.requestSignal });
      // On a node already gone the watch waits for its creation, which never comes (its name was unique).
      if (stat === null) client.removeWatcher(path, watcher).catch(() => undefined);
      armed = stat !== null && !fired;
      return { stat, watch };
    } catch (error) {
      if (!isTransient(error)) throw error;
      await awaitSession(client, session, deadline);
    }
  }
}

/** The errors sessionLost made, told apart from a request's SESSIONEXPIRED by tryAcquire. */
const placeLost = new WeakSet<object>();

/** Our place at the head of the queue went with the session (or an admin): queue again. */
function sessionLost(path: string): ZooKeeperError {
  const error = new ZooKeeperError('SESSIONEXPIRED', 'the queue node we held is gone', { path, op: 'acquire' });
  placeLost.add(error);
  return error;
}
