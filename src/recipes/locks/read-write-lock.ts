import type { DataResult, Stat, ZooKeeperClient } from '../../client/index.js';
import { ZooKeeperError } from '../../client/index.js';
import { limitHold } from '../lease/hold-limit.js';
import { Lease } from '../lease/lease.js';
import { LockError } from '../support/lock-error.js';
import type { LockOptions } from './mutex.js';
import { QueueLock } from './mutex.js';
import { downgradedData, isDowngraded, ownerData } from '../support/owner-data.js';
import { refuseInside, sectionOf } from '../lease/reentrancy.js';
import { isRevocationRequest, ownerReplaced } from '../lease/revocation.js';
import { isTransient } from '../support/transient.js';
import { awaitBriefly } from '../support/abandon.js';
import { deleteGuaranteed } from '../support/guaranteed-delete.js';

/**
 * A shared read / exclusive write lock in Curator's layout (`_c_<uuid>-__READ__<seq>`,
 * `_c_<uuid>-__WRIT__<seq>`; kazoo's `__rlock__`/`__lock__` with `layout: 'kazoo'`). Readers
 * wait only for the nearest writer ahead of them, writers for their predecessor; order is FIFO,
 * so readers arriving after a waiting writer do not starve it.
 */
export class ReadWriteLock {
  readonly readLock: ReadLock;
  readonly writeLock: WriteLock;

  constructor(
    private readonly client: ZooKeeperClient,
    lockPath: string,
    private readonly options: LockOptions = {},
  ) {
    this.readLock = new ReadLock(client, lockPath, options, this);
    this.writeLock = new WriteLock(client, lockPath, options, this);
  }

  /**
   * Write → read without letting another writer in: our write node stays where it is (writers
   * queued behind it keep waiting for it) but is marked downgraded, which wakes the readers
   * waiting for it and lets them share. A fresh read node would queue behind those writers, and
   * would either wait for them (deadlock: they wait for us) or, if granted, let them in as soon
   * as the write node went. Curator and kazoo readers do not know the marker: they keep waiting
   * for the node itself, which is safe.
   *
   * A reader may get in as soon as the marker commits, before its reply is back: the write lease
   * gives up its claim (not held, its signal aborted with RELEASED, guard() refused) before the
   * marker is sent, once downgrade has read the node. From then on the node is unmarked, or ours
   * as a reader's; nothing claims more than that.
   *
   * NOT_HELD when the write lease is no longer held, or its node, session or hold ended during
   * the downgrade; DOWNGRADE_CONFLICT when others kept writing into our node (each attempt's versioned write
   * refused): the downgrade gives up and the write lock is released (its node deleted), as it is
   * on every failure once the write lease was ended. When the marker's write was sent but its
   * outcome is unknown (connection lost) and a read of the node cannot tell, the read lease is
   * handed out all the same: the node is marked (readers share) or still a writer (readers
   * wait), and either way at least as exclusive as a read lease claims.
   */
  async downgrade(writeLease: Lease): Promise<Lease> {
    const where = { path: writeLease.node, op: 'downgrade' };
    if (!writeLease.held) throw new LockError('NOT_HELD', 'the write lease is no longer held', where);
    // Read while the write lease still holds: a failure here leaves it as it was.
    let read = await this.readOwnNode(writeLease);
    // That round trip took time: the hold may have expired meanwhile (the write lease is then left to its forced release, if any).
    if (!writeLease.held) throw new LockError('NOT_HELD', 'the write lease is no longer held (its hold may have expired during the downgrade)', where);
    const pending = writeLease.handOver();
    let readLease: Lease;
    try {
      let requested = pending.requested;
      let stat: Stat | undefined;
      for (let attempt = 1; ; attempt++) {
        // A revocation request (Curator's Revoker, requestRevocation) passes to the read lease.
        requested ||= isRevocationRequest(read.data);
        stat = await this.writeMarker(writeLease, read);
        if (stat) break;
        if (attempt === DOWNGRADE_ATTEMPTS) throw new LockError('DOWNGRADE_CONFLICT', `others wrote into our write node during each of ${DOWNGRADE_ATTEMPTS} attempts; the write lock was released`, where);
        read = await this.readOwnNode(writeLease);
      }
      // As for every acquire (see handOut): none once close() has begun, which ends the session the lease would stand on.
      if (this.client.closing) throw new ZooKeeperError('CLOSED', 'the client was closed before the read lease was handed out', where);
      // The round trips took time: the session or the hold may have ended meanwhile. No lease already lost is handed out.
      if (this.client.sessionId !== writeLease.sessionId || (writeLease.holdLimit?.expiresAt ?? Infinity) <= performance.now()) {
        throw new LockError('NOT_HELD', 'the session or the hold ended during the downgrade; the write lock was released', where);
      }
      const marked = stat;
      readLease = new Lease(this.client, writeLease.lockPath, writeLease.node, marked, { ...this.options, revocationPending: { ...pending, requested } }, { owner: this.readLock });
    } catch (error) {
      // No lease owns our node any more: it goes, waited for briefly (the rest in the background).
      await awaitBriefly(this.client, deleteGuaranteed(this.client, writeLease.node, writeLease.sessionId)).catch(() => undefined);
      throw error;
    }
    // The same hold goes on: its bound does not restart (the write lease's timers ended with handOver).
    if (writeLease.holdLimit) readLease[limitHold](writeLease.holdLimit);
    return readLease;
  }

  /**
   * Writes the marker over `read` (versioned: a request written after our read must not be lost
   * under it). The node's stat once marked; undefined when someone wrote the node since our read,
   * or the write was lost before it ran (read it again).
   */
  private async writeMarker(writeLease: Lease, read: DataResult): Promise<Stat | undefined> {
    // Where Curator's request bytes replaced our owner data, the marker goes on ours.
    const owned = ownerReplaced(read.data) ? ownerData(this.options.ownerId, { revocable: this.options.revocable }) : read.data;
    const marked = downgradedData(owned);
    try {
      return await this.client.setData(writeLease.node, marked, { version: read.stat.version });
    } catch (error) {
      if (error instanceof ZooKeeperError && error.code === 'BADVERSION') return undefined;
      if (!isTransient(error)) throw nodeGone(error, writeLease.node);
      return this.afterLostWrite(writeLease, read.stat.version);
    }
  }

  private async readOwnNode(writeLease: Lease): Promise<DataResult> {
    try {
      return await this.client.getData(writeLease.node);
    } catch (error) {
      throw nodeGone(error, writeLease.node);
    }
  }

  /**
   * The marker's write may or may not have been applied (its reply was lost): the node tells,
   * read again within the client's request timeout. Marked (only we mark it): done. At the
   * version we wrote over: not applied, undefined to write again. Anything else (written since,
   * or unreadable): the read lease anyway, never the write lease, which may no longer be alone.
   */
  private async afterLostWrite(writeLease: Lease, wroteOver: number): Promise<Stat | undefined> {
    let read: DataResult;
    try {
      read = await this.readOwnNode(writeLease);
    } catch (error) {
      if (error instanceof LockError || !isTransient(error)) throw error;
      return writeLease.stat;
    }
    if (isDowngraded(read.data)) return read.stat;
    return read.stat.version === wroteOver ? undefined : read.stat;
  }
}

/** A NONODE for our write node (deleted by a forced release, an operator) is NOT_HELD: the lock is no longer ours to downgrade. */
function nodeGone(error: unknown, node: string): unknown {
  if (error instanceof ZooKeeperError && error.code === 'NONODE') return new LockError('NOT_HELD', 'our write node is gone', { path: node, op: 'downgrade', cause: error });
  return error;
}

/** Writes into our node by others are rare (a revocation request): past this many reads in a row, give up. */
const DOWNGRADE_ATTEMPTS = 3;

export class ReadLock extends QueueLock {
  constructor(
    client: ZooKeeperClient,
    lockPath: string,
    options: LockOptions,
    private readonly pair: ReadWriteLock,
  ) {
    super(client, lockPath, 'shared', 'rw', options);
  }

  /**
   * Inside the write lock's `runExclusive` a new read node would queue behind any writer waiting
   * for us, and wait for it forever: fail at once and point to downgrade().
   */
  protected override precheck(): void {
    super.precheck();
    refuseInside(sectionOf(this.pair.writeLock), this.lockPath, 'WOULD_DEADLOCK', 'this call chain holds the write lock: use ReadWriteLock.downgrade(writeLease) to take the read lock');
  }
}

export class WriteLock extends QueueLock {
  constructor(
    client: ZooKeeperClient,
    lockPath: string,
    options: LockOptions,
    private readonly pair: ReadWriteLock,
  ) {
    super(client, lockPath, 'exclusive', 'rw', options);
  }

  /** Fails at once with UPGRADE_NOT_SUPPORTED inside the read lock's `runExclusive`: waiting for our own reader would never end. */
  protected override precheck(): void {
    super.precheck();
    refuseInside(sectionOf(this.pair.readLock), this.lockPath, 'UPGRADE_NOT_SUPPORTED', 'a read lock holder cannot take the write lock: release the read lock first');
  }
}
