import type { ZooKeeperClient } from '../client/index.js';
import { ZooKeeperError } from '../client/index.js';
import { Lease } from './lease.js';
import { LockError } from './lock-error.js';
import type { LockOptions } from './mutex.js';
import { QueueLock } from './mutex.js';
import { downgradedData, ownerData } from './owner-data.js';
import { refuseInside, sectionOf } from './reentrancy.js';
import { isRevocationRequest } from './revocation.js';

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
   */
  async downgrade(writeLease: Lease): Promise<Lease> {
    const where = { path: writeLease.node, op: 'downgrade' };
    if (!writeLease.held) throw new LockError('NOT_HELD', 'the write lease is no longer held', where);
    let pending = false;
    let stat;
    for (let attempt = 1; ; attempt++) {
      try {
        const read = await this.client.getData(writeLease.node);
        // A revocation request (Curator's Revoker, requestRevocation) replaced our owner data; the
        // marker goes on ours, and the request passes to the read lease.
        pending ||= isRevocationRequest(read.data);
        const data = isRevocationRequest(read.data) ? ownerData(this.options.ownerId) : read.data;
        // Versioned: a request written after our read must not be lost under the marker.
        stat = await this.client.setData(writeLease.node, downgradedData(data), { version: read.stat.version });
        break;
      } catch (error) {
        if (error instanceof ZooKeeperError && error.code === 'NONODE') throw new LockError('NOT_HELD', 'our write node is gone', { ...where, cause: error });
        // Someone wrote the node between our read and our write: read it again, a few times at most.
        if (!(error instanceof ZooKeeperError && error.code === 'BADVERSION' && attempt < DOWNGRADE_ATTEMPTS)) throw error;
      }
    }
    const passed = writeLease.handOver();
    return new Lease(this.client, writeLease.lockPath, writeLease.node, stat, { ...this.options, revocationPending: { ...passed, requested: passed.requested || pending } });
  }
}

/** Writes into our node by others are rare (a revocation request): past this many in a row, give up. */
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
