/**
 * The lock path's data as a handoff record. A holder of the exclusive lock releases with one
 * transaction that names its node in the lock path's data and deletes the node. The contender
 * woken by that deletion reads the lock path: if it names the node it watched, that node held
 * the lock, so everything that was ahead of it is gone for good, and the waiter holds the lock
 * without checking each node of its first listing (a cost that grows with the queue).
 *
 * Only data that is empty or already such a record is ever overwritten: a lock path that carries
 * someone's data is left alone, and its waiters check the queue as usual.
 */
const PREFIX = 'zklock:released:';

export function releaseRecord(name: string): Buffer {
  return Buffer.from(PREFIX + name);
}

/** Whether the lock path's data may be replaced by a release record. */
export function holdsNoUserData(data: Buffer | null): boolean {
  return !data || data.length === 0 || data.toString('latin1', 0, PREFIX.length) === PREFIX;
}

/** Whether the lock path's data says that `name` was released by its holder. */
export function recordsRelease(data: Buffer | null, name: string): boolean {
  return data?.toString('utf8') === PREFIX + name;
}
