import type { ACL, AcquireOptions, Layout, Lease, TryAcquireOptions, ZooKeeperClient } from '../index.js';
import { Mutex, ReadWriteLock, Semaphore } from '../index.js';
import { CliError } from './cli-error.js';
import { EXIT } from './exit-codes.js';

export interface LockFlags {
  read?: boolean;
  write?: boolean;
  limit?: number;
  layout: Layout;
  /** A mutex's lockDelay (ms > 0): see MutexOptions.lockDelay. */
  lockDelay?: number;
  /** Listen for revocation requests (a mutex or read/write lock; a semaphore's leases cannot be revoked). */
  revocable?: boolean;
  /** The ACL of every node the lock creates (its path, parents, contender and lease nodes); default the client's. */
  acl?: ACL[];
  /** The identities the session authenticates as (`--auth`): the creator an `auth` ACL entry names. */
  auth?: readonly unknown[];
}

/** What `exec` acquires: the one lock recipe the flags select, behind one acquire function. */
export interface SelectedLock {
  /** e.g. "mutex", "read lock", "semaphore (limit 2)", for messages. */
  description: string;
  acquire(options: AcquireOptions): Promise<Lease>;
  /** The lock if it is free right now, else null (not acquire with a zero timeout, which cannot spare the round trips). */
  tryAcquire(options: TryAcquireOptions): Promise<Lease | null>;
}

export function selectLock(client: ZooKeeperClient, path: string, flags: LockFlags, ownerId: string): SelectedLock {
  const chosen = [flags.read && '--read', flags.write && '--write', flags.limit !== undefined && '--limit'].filter(Boolean);
  if (chosen.length > 1) throw new CliError(`${chosen.join(' and ')} cannot be combined: choose one kind of lock`, EXIT.USAGE);
  // The library has it on mutexes alone (readers releasing together would contend for one record; a semaphore's holders leave none).
  if (flags.lockDelay !== undefined && chosen.length > 0) throw new CliError(`--lock-delay is for a mutex: ${chosen[0]} takes a lock without one`, EXIT.USAGE);
  if (flags.revocable && flags.limit !== undefined) throw new CliError('--revocable is for a mutex or a read/write lock: a semaphore\'s leases cannot be revoked', EXIT.USAGE);
  const revocable = flags.revocable ?? false;
  // The server would refuse it (INVALIDACL): an `auth` entry stands for the session's identities, and there are none.
  if (flags.acl?.some((entry) => entry.id.scheme === 'auth') && !flags.auth?.length) throw new CliError('--acl names the creator (auth, creator-all): give its identity with --auth', EXIT.USAGE);
  if (flags.limit !== undefined) {
    const semaphore = new Semaphore(client, path, flags.limit, { ownerId, layout: flags.layout, acl: flags.acl });
    return { description: `semaphore (limit ${flags.limit})`, acquire: (options) => semaphore.acquire(options), tryAcquire: (options) => semaphore.tryAcquire(options) };
  }
  if (flags.read || flags.write) {
    const rw = new ReadWriteLock(client, path, { layout: flags.layout, ownerId, revocable, acl: flags.acl });
    const side = flags.read ? rw.readLock : rw.writeLock;
    return { description: flags.read ? 'read lock' : 'write lock', acquire: (options) => side.acquire(options), tryAcquire: (options) => side.tryAcquire(options) };
  }
  const mutex = new Mutex(client, path, { layout: flags.layout, ownerId, lockDelay: flags.lockDelay, revocable, acl: flags.acl });
  return { description: 'mutex', acquire: (options) => mutex.acquire(options), tryAcquire: (options) => mutex.tryAcquire(options) };
}
