import type { ZooKeeperClient } from '../client/index.js';
import type { Lease } from './lease.js';
import { LockError } from './lock-error.js';
import type { AcquireAttempt, LockOptions } from './mutex.js';
import { QueueLock } from './mutex.js';
import { heldBy } from './reentrancy.js';

/**
 * A shared read / exclusive write lock in Curator's layout (`_c_<uuid>-__READ__<seq>`,
 * `_c_<uuid>-__WRIT__<seq>`; kazoo's `__rlock__`/`__lock__` with `layout: 'kazoo'`). Readers
 * wait only for the nearest writer ahead of them, writers for their predecessor; order is FIFO,
 * so readers arriving after a waiting writer do not starve it.
 */
export class ReadWriteLock {
  readonly readLock: ReadLock;
  readonly writeLock: WriteLock;

  constructor(client: ZooKeeperClient, lockPath: string, options: LockOptions = {}) {
    this.readLock = new ReadLock(client, lockPath, options, this);
    this.writeLock = new WriteLock(client, lockPath, options, this);
  }

  /**
   * Write → read: takes the read lock at once (our writer is the only contender ahead of it that
   * could block it), then releases the write lock: no other writer can get in between.
   */
  async downgrade(writeLease: Lease): Promise<Lease> {
    if (!writeLease.held) throw new LockError('NOT_HELD', 'the write lease is no longer held', { path: writeLease.node, op: 'downgrade' });
    const readLease = await this.readLock.acquire({ ignore: new Set([nodeName(writeLease.node)]) });
    await writeLease.release();
    return readLease;
  }
}

export class ReadLock extends QueueLock {
  constructor(
    client: ZooKeeperClient,
    lockPath: string,
    options: LockOptions,
    private readonly pair: ReadWriteLock,
  ) {
    super(client, lockPath, 'shared', 'rw', options);
  }

  /** Inside the write lock's `runExclusive`, the read lock is granted at once: our own writer does not block us. */
  override acquire(attempt: AcquireAttempt = {}): Promise<Lease> {
    const writer = heldBy<Lease>(this.pair.writeLock)?.lease;
    if (writer?.held) return super.acquire({ ...attempt, ignore: new Set([nodeName(writer.node)]) });
    return super.acquire(attempt);
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
  override acquire(attempt: AcquireAttempt = {}): Promise<Lease> {
    if (heldBy<Lease>(this.pair.readLock)?.lease.held) {
      return Promise.reject(
        new LockError('UPGRADE_NOT_SUPPORTED', 'a read lock holder cannot take the write lock: release the read lock first', {
          path: this.lockPath,
          op: 'acquire',
        }),
      );
    }
    return super.acquire(attempt);
  }
}

function nodeName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}
