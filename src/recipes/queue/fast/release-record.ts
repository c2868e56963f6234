import { ZooKeeperError } from '../../../client/index.js';
import type { Contender } from '../contender-name.js';
import type { QueueWait } from '../queue-watch.js';

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

/** Only a zklock holder of the exclusive lock leaves a release record (no data: it went before we read it). */
export function mayHaveRecorded(gone: Contender, byZklock: boolean | undefined): boolean {
  return gone.kind === 'exclusive' && byZklock !== false;
}

export interface RecordRead {
  /** The lock path's data is a release record naming the blocker that went. */
  namesGone: boolean;
  /** The version a release record of ours may replace, or null when the data is someone's own. */
  over: number | null;
  /** The lockDelay the record naming the blocker was marked with (see lock-delay.ts), if it was. */
  kept?: number | undefined;
}

/** A waiter that may read records: `records` is shared by the acquisitions of one lock (see QueueOptions.records). */
export interface RecordReader extends QueueWait {
  records: { missed: boolean };
}

/**
 * The fast path: reads the lock path's data for a release record naming `gone`. Its proof (see
 * release-record.ts): only a holder writes the record, in the transaction that deletes its node,
 * so `gone` held the lock, so every contender that was ahead of it had gone for good; the rest of
 * our first listing was ahead of `gone`, so nothing is left ahead of us. Notes on the lock whether
 * records answer here (see stillBlocking).
 */
export async function readRecord(o: RecordReader, gone: string): Promise<RecordRead> {
  let read;
  try {
    read = await o.client.getData(o.lockPath, { signal: o.deadline.requestSignal });
  } catch (error) {
    // Not allowed to read the lock path's data: no record to find, and none to leave.
    if (!(error instanceof ZooKeeperError) || error.code !== 'NOAUTH') throw error;
    o.records.missed = true;
    return { namesGone: false, over: null };
  }
  const record = parseRecord(read.data);
  o.records.missed = record?.name !== gone;
  return { namesGone: !o.records.missed, over: record !== undefined || holdsNoUserData(read.data) ? read.stat.version : null, kept: o.records.missed ? undefined : record!.kept };
}
