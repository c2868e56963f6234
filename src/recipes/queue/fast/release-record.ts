/**
 * The lock path's data as a handoff record. A waiter reads the lock path when its nearest blocker
 * (a zklock holder of the exclusive lock) goes and others were ahead of it too, unless its
 * lookahead (queue-lookahead.ts) already knows they are gone. If the data names
 * the node it watched, that node held the lock, so everything that was ahead of it is gone for
 * good, and the waiter holds the lock without checking each node of its first listing (a cost
 * that grows with the queue). A waiter that read the lock path this way, once it holds the
 * exclusive lock, releases with one transaction that names its node there and deletes it. A
 * holder of a lock with a lockDelay always reads the lock path and so always leaves one, marked
 * with its lockDelay: only a marked record tells the next holder that the handoff was clean
 * (see lock-delay.ts); every record, marked or not, answers the waiters' fast path.
 *
 * The record replaces only data that was empty or already a record when read, and only at the
 * version read then: data written meanwhile, or kept there by someone, is never overwritten.
 */
const PREFIX = 'zklock:released:';
/** Between the name and the lockDelay (ms) of a marked record; no contender name contains it. */
const KEPT = ' lockDelay=';

/** The record naming `name`; with `kept`, marked: its holder had a lockDelay of `kept` ms (see lock-delay.ts). */
export function releaseRecord(name: string, kept?: number): Buffer {
  return Buffer.from(PREFIX + name + (kept === undefined ? '' : KEPT + kept));
}

/** Whether the lock path's data may be replaced by a release record. */
export function holdsNoUserData(data: Buffer | null): boolean {
  return !data || data.length === 0 || isReleaseRecord(data);
}

/** Whether the lock path's data is a release record, whoever it names. */
function isReleaseRecord(data: Buffer | null): boolean {
  return data?.toString('latin1', 0, PREFIX.length) === PREFIX;
}

/**
 * The lock path's data read as a release record, decoded once: the node it names, released by
 * its holder, and for a marked record the lockDelay that holder had (see lock-delay.ts);
 * undefined for data that is no record.
 */
export function parseRecord(data: Buffer | null): { name: string; kept: number | undefined } | undefined {
  if (!isReleaseRecord(data)) return undefined;
  const text = data!.toString('utf8', PREFIX.length);
  const at = text.lastIndexOf(KEPT);
  const kept = at < 0 ? '' : text.slice(at + KEPT.length);
  return /^\d+$/.test(kept) ? { name: text.slice(0, at), kept: Number(kept) } : { name: text, kept: undefined };
}
