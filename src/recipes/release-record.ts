/**
 * The lock path's data as a handoff record. A waiter reads the lock path when its nearest blocker
 * (a zklock holder of the exclusive lock) goes and others were ahead of it too, unless its
 * lookahead (queue-lookahead.ts) already knows they are gone. If the data names
 * the node it watched, that node held the lock, so everything that was ahead of it is gone for
 * good, and the waiter holds the lock without checking each node of its first listing (a cost
 * that grows with the queue). A waiter that read the lock path this way, once it holds the
 * exclusive lock, releases with one transaction that names its node there and deletes it. A
 * holder of a lock with a lockDelay always reads the lock path and so always leaves one: the
 * record is also how the next holder knows the handoff was clean (see lock-delay.ts).
 *
 * The record replaces only data that was empty or already a record when read, and only at the
 * version read then: data written meanwhile, or kept there by someone, is never overwritten.
 */
const PREFIX = 'zklock:released:';

export function releaseRecord(name: string): Buffer {
  return Buffer.from(PREFIX + name);
}

/** Whether the lock path's data may be replaced by a release record. */
export function holdsNoUserData(data: Buffer | null): boolean {
  return !data || data.length === 0 || isReleaseRecord(data);
}

/** Whether the lock path's data is a release record, whoever it names. */
export function isReleaseRecord(data: Buffer | null): boolean {
  return data?.toString('latin1', 0, PREFIX.length) === PREFIX;
}

/** Whether the lock path's data says that `name` was released by its holder. */
export function recordsRelease(data: Buffer | null, name: string): boolean {
  return data?.toString('utf8') === PREFIX + name;
}
