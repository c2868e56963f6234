import type { ZooKeeperClient } from '../../client/index.js';
import { LockError } from '../support/lock-error.js';
import type { AcquireOptions, TryAcquireOptions } from '../support/deadline.js';
import { Deadline, tryOnly } from '../support/deadline.js';
import type { HoldLimit } from '../lease/hold-limit.js';
import { limitHold } from '../lease/hold-limit.js';
import { clientsOf, handOut, lostNow } from '../lease/hand-out.js';
import type { LockState } from '../inspect.js';
import type { Lease } from '../lease/lease.js';
import type { QueueLock } from './mutex.js';
import { releaseQuietly } from './mutex.js';
import { giveUp } from '../support/abandon.js';
import { runSection } from '../lease/reentrancy.js';
import { lockTraced, traceAcquire } from '../diagnostics.js';
import { anySignal } from '../support/any-signal.js';

/** Several held locks (or a semaphore's leases) as one. Its signal aborts when any of them is lost. */
export class MultiLease implements AsyncDisposable {
  private readonly combined: AbortSignal;
  private released = false;
  private hold: HoldLimit | undefined;

  constructor(
    /** In acquisition order (a multi-lock's sorted by lock path). */
    readonly leases: readonly Lease[],
  ) {
    this.combined = anySignal(leases.map((lease) => lease.signal));
  }

  /**
   * Aborts when any of the locks is, or may be, lost. Each look asks every lease first, which
   * checks its liveness proof against the clock: after a stall the combined signal is then already
   * aborted, not a timer tick later (see LeaseMonitor). A signal kept and read later (handed to
   * fetch, say) learns of a lapse only from the timer: read `held` right before acting.
   */
  get signal(): AbortSignal {
    for (const lease of this.leases) void lease.signal;
    return this.combined;
  }

  /** The bound of the whole set (`maxHold`), or undefined: see Lease.holdLimit. */
  get holdLimit(): HoldLimit | undefined {
    return this.hold;
  }

  /** One bound for the whole set: every lease gets the same, so the combined signal aborts with HOLD_EXPIRED at its end. */
  [limitHold](limit: HoldLimit): void {
    this.hold = limit;
    for (const lease of this.leases) lease[limitHold](limit);
  }

  /** The clients of its locks, for the hand-out (see handOut). */
  [lostNow](): unknown {
    // Its combined signal exists already (made with it); reading it asks each lease's clock.
    const signal = this.signal;
    return signal.aborted ? (signal.reason as unknown) : undefined;
  }

  get [clientsOf](): readonly ZooKeeperClient[] {
    return this.leases.flatMap((lease) => lease[clientsOf]);
  }

  get fencingTokens(): bigint[] {
    return this.leases.map((lease) => lease.fencingToken);
  }

  get held(): boolean {
    return !this.released && this.leases.every((lease) => lease.held);
  }

  /** Releases every lock (see releaseAll: all are released even when one fails, then the failure is thrown). */
  async release(): Promise<void> {
    if (this.released) throw new LockError('ALREADY_RELEASED', 'the multi-lease was already released', { op: 'release' });
    this.released = true;
    await releaseAll(this.leases);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (!this.released) await this.release();
  }
}

/**
 * Acquires several locks as one (Curator's InterProcessMultiLock, done right): in sorted path
 * order, so two multi-locks over the same set in any order cannot deadlock; one deadline for the
 * whole set; on failure what was taken is released in reverse order before the rejection.
 */
export class MultiLock {
  private readonly locks: readonly QueueLock[];

  constructor(locks: readonly QueueLock[]) {
    if (locks.length === 0) throw new LockError('INVALID_ARGUMENT', 'a multi-lock needs at least one lock', { op: 'multiLock' });
    const paths = new Set(locks.map((lock) => lock.lockPath));
    if (paths.size !== locks.length) throw new LockError('INVALID_ARGUMENT', 'a multi-lock cannot hold the same lock path twice', { op: 'multiLock' });
    this.locks = [...locks].sort((a, b) => (a.lockPath < b.lockPath ? -1 : a.lockPath > b.lockPath ? 1 : 0));
  }

  /** Traced as one acquire of kind 'multi' on the first path, with each lock's own acquire inside it. */
  acquire(options: AcquireOptions = {}): Promise<MultiLease> {
    return this.traced(() => this.acquireNow(options));
  }

  private traced<T extends MultiLease | null>(run: () => Promise<T>): Promise<T> {
    return lockTraced() ? traceAcquire({ lockPath: this.locks[0]!.lockPath, kind: 'multi' }, run) : run();
  }

  private async acquireNow(options: AcquireOptions): Promise<MultiLease> {
    const deadline = new Deadline(options, this.locks[0]!.lockPath, 'acquire');
    let taken: Lease[] = [];
    try {
      for (;;) {
        for (const lock of this.locks) taken.push(await lock.acquire({ signal: deadline.signal }));
        // The hold's clock starts as the whole set is handed out, not at its first lock.
        if (await this.confirmHeld(taken, deadline.signal)) return await handOut(new MultiLease(taken), options, deadline);
        await this.giveUpTaken(taken, deadline);
        taken = [];
      }
    } catch (error) {
      await this.giveUpTaken(taken, deadline);
      // The deadline's own error (LOCK_TIMEOUT or ABORTED) rather than the inner lock's echo of it.
      throw deadline.failure(error);
    } finally {
      deadline.dispose();
    }
  }

  /**
   * All the locks if all are free now (and none was lost meanwhile), else null; nothing is left
   * held when it returns null. Traced as acquire is, with each lock's own try inside it.
   */
  tryAcquire(options: TryAcquireOptions = {}): Promise<MultiLease | null> {
    return this.traced(() => this.tryAcquireNow(options));
  }

  private async tryAcquireNow(options: TryAcquireOptions): Promise<MultiLease | null> {
    const attempt = tryOnly(options, this.locks[0]!.lockPath);
    const deadline = new Deadline(attempt, this.locks[0]!.lockPath, 'tryAcquire');
    const { requestSignal: signal } = deadline;
    const taken: Lease[] = [];
    try {
      for (const lock of this.locks) {
        const lease = await lock.tryAcquire({ signal });
        if (!lease) {
          await this.giveUpTaken(taken, deadline);
          return null;
        }
        taken.push(lease);
      }
      if (await this.confirmHeld(taken, signal)) return await handOut(new MultiLease(taken), attempt, deadline);
      await this.giveUpTaken(taken, deadline);
      return null;
    } catch (error) {
      await this.giveUpTaken(taken, deadline);
      throw deadline.failure(error);
    } finally {
      deadline.dispose();
    }
  }

  /**
   * Releases the leases an acquire took and no longer wants, as a queue lock gives up its node
   * (see giveUp): waited for until the deadline and, once it has passed, only briefly for each
   * lease's client; the rest goes on in the background. A silent
   * connection would otherwise hold the rejection until the client reconnects.
   */
  private async giveUpTaken(taken: readonly Lease[], deadline: Deadline): Promise<void> {
    await releaseAll(taken, (lease) => giveUp(lease[clientsOf][0]!, releaseQuietly(lease), deadline));
  }

  /**
   * A lock taken early can be lost while we wait for a later one (its session expired and a later
   * wait re-queued on the new session; an operator deleted its node), and a lease learns of a loss
   * only through a watch set once someone looks: never hand out a lease already lost, ask the
   * server (one pipelined round trip per client).
   */
  private async confirmHeld(taken: readonly Lease[], signal?: AbortSignal): Promise<boolean> {
    const confirmed = await Promise.all(this.locks.map((lock, i) => lock.confirmHeld(taken[i]!, signal)));
    // Each answer was read at its own moment: a stall between two of them (the locks may be on
    // clients with different timeouts) can have run out an earlier one's proof. Ask all at once.
    return confirmed.every(Boolean) && taken.every((lease) => lease.held);
  }

  /** Each lock's holders and waiters, in the multi-lock's (sorted path) order. */
  async participants(): Promise<LockState[]> {
    return Promise.all(this.locks.map((lock) => lock.participants()));
  }

  /**
   * Runs `fn` holding every lock, then releases them. Inside `fn` (its async call chain) each lock
   * is in its section, as in its own runExclusive: a Mutex of the set re-enters
   * (`mutex.runExclusive`), and any other acquire of one of them fails at once with
   * WOULD_DEADLOCK (or UPGRADE_NOT_SUPPORTED) instead of queueing behind our own node.
   */
  async runExclusive<T>(fn: (lease: MultiLease) => Promise<T> | T, options: AcquireOptions = {}): Promise<T> {
    const lease = await this.acquire(options);
    try {
      const inSections = this.locks.reduceRight<() => Promise<T>>(
        (inner, lock, i) => () => runSection(lock, lease.leases[i]!, inner),
        async () => fn(lease),
      );
      return await inSections();
    } finally {
      await lease[Symbol.asyncDispose]();
    }
  }
}

/**
 * Releases every lease, sent in reverse order of acquisition, each whatever becomes of the others
 * (one failure must not leave the rest held). Then throws what failed: the release's own error
 * when one did, an AggregateError of them all when several did.
 */
export async function releaseAll(leases: readonly Lease[], release: (lease: Lease) => Promise<void> = releaseQuietly): Promise<void> {
  const results = await Promise.allSettled([...leases].reverse().map(release));
  const failures = results.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []));
  if (failures.length === 1) throw failures[0];
  if (failures.length > 1) throw new AggregateError(failures, `${failures.length} of ${leases.length} releases failed`);
}
