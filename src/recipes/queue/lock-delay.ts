import type { Stat } from '../../client/index.js';
import { MAX_TIMER_MS } from '../../client/durations.js';
import { LockError } from '../support/lock-error.js';
import type { RecordRead } from './fast/release-record.js';
import { parseRecord } from './fast/release-record.js';

/**
 * How the lock came to us, as far as ZooKeeper shows it (see README, *Lock-delay*):
 * - `clean`: the last holder released it and left a record marked with a lockDelay at least ours
 *   (release-record.ts), or it was our own last hold, released by its holder, and nobody queued
 *   since (sequence-proof.ts);
 * - `unclean`: not proven clean although zklock holders leave records here: the last to go left
 *   none (its session expired, someone deleted its node, or it was a waiter that gave up);
 * - `unknown`: nothing to go by: the lock path was missing or unreadable, holds no record at all,
 *   a record without a mark (a holder without lockDelay, a write lock's) or with a shorter
 *   lockDelay than ours, or the last to go was not zklock's (Curator, kazoo) or went before we
 *   read whose it was.
 * Only `clean` passes the lock on at once; a false `unclean` or `unknown` costs a delay, never safety.
 *
 * Why a marked record is proof. A holder with a lockDelay of `d` ms writes its record marked `d`,
 * in the transaction that deletes its own node, so only while it still held. Claim: when a record
 * marked `d` names B, every holder before B that did not release cleanly had its node gone at
 * least `d` ms before B's acquire resolved. B resolved in one of three ways. Delayed: it kept its
 * node `d` ms after it saw the node before it go, and every earlier node went before that one.
 * Clean by a marked record `d' >= d` naming the holder A right before it: A released cleanly and,
 * by the claim for A, every earlier unclean holder went `d'` ms before A resolved, which was
 * before B did. Clean as our own last hold (same lock object, same `d`, nobody queued since): the
 * claim for that hold, whose holder released it itself. By induction the claim holds for every
 * marked record. So a contender with a lockDelay of at most `d` that finds such a record naming
 * the holder it followed has nobody left to wait for. An unmarked record proves B released
 * cleanly but says nothing of how B came to hold: a holder without lockDelay may have taken the
 * lock at once after an unclean handoff, so it would launder that handoff into a clean one.
 */
export type Handoff = 'clean' | 'unclean' | 'unknown';

/**
 * `lockDelay` as given: 0 (off) or a whole number of ms a timer can wait; INVALID_ARGUMENT with
 * the path otherwise. Whole: the release record carries it as digits (release-record.ts), and a
 * fraction there would read as unmarked, so no handoff after such a holder could ever be clean.
 */
export function checkLockDelay(value: number | undefined, path: string): number {
  if (value === undefined) return 0;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_TIMER_MS) {
    throw new LockError('INVALID_ARGUMENT', `lockDelay must be a whole number of ms in [0, ${MAX_TIMER_MS}], got ${String(value)}`, { path, op: 'lock' });
  }
  return value;
}

/**
 * How the lock came to a contender that waited, from the lock path read after its last blocker
 * went (`read`) and whether that blocker's data was zklock's (`byZklock`; undefined: gone before
 * we read it). Clean only by a marked record naming it (the proof above). Unclean only when
 * records are left here and the one that let us in was zklock's: a node gone before we read it
 * could be anyone's.
 */
export function waitedHandoff(read: RecordRead, byZklock: boolean | undefined, lockDelay: number): Handoff {
  if (read.namesGone) return (read.kept ?? -1) >= lockDelay ? 'clean' : 'unknown';
  return read.over !== null && byZklock === true ? 'unclean' : 'unknown';
}

/** The lock path read right before our create (pipelined ahead of it): missing, refused (NOAUTH), or its data. */
export type ParentRead = { data: Buffer; stat: Stat } | 'missing' | 'refused';

/**
 * A contender that found nobody ahead of it: whether the last holder released cleanly, from the
 * lock path read right before our create (`before`) and the parent's stat in the listing sent
 * right after it (`listed`), for our `lockDelay`. Clean only when all of these hold:
 * - the data is a release record marked with a lockDelay of at least ours (only a holder's
 *   release writes one, see release-record.ts; the proof above);
 * - `mzxid !== czxid`: the data was written after the path was made, not with it (a path
 *   restored or copied with a record in its data, whose czxid, mzxid and pzxid are one);
 * - `pzxid === mzxid`: the last change to the children was that record's own transaction, the
 *   holder's delete. The server sets the parent's pzxid on every create and delete of a child
 *   (PrepRequestProcessor's create and delete cases, DataTree.createNode/deleteNode, 3.8 and 3.9)
 *   and the record's setData sets mzxid in the same transaction;
 * - `numChildren === 0`: nobody queued behind that holder was left to hold after it;
 * - our sequence is the count of creates the read saw: nobody was created between the read and
 *   our create, and with no child at the read nobody could go either. The server names a
 *   sequential child with the parent's count of child creates (PrepRequestProcessor: the
 *   `parentCVersion` it formats into the name; only creates advance it, deletes set pzxid
 *   alone), and shows clients `2 × creates − numChildren` as cversion (DataNode.copyStat, "v3
 *   semantics"), in an int32: with no children, `cversion >>> 1` is the count modulo 2^31;
 * - the same lock path (`czxid`) at both ends: one reaped as an empty container and made again
 *   restarts its count, which could otherwise match by chance.
 */
export function joinedHandoff(before: ParentRead | undefined, listed: Stat | undefined, seq: number, lockDelay: number): Handoff {
  if (before === undefined || typeof before === 'string' || !((parseRecord(before.data)?.kept ?? -1) >= lockDelay)) return 'unknown';
  const { stat } = before;
  const clean =
    stat.mzxid !== stat.czxid &&
    stat.pzxid === stat.mzxid &&
    stat.numChildren === 0 &&
    stat.cversion >>> 1 === (seq & 0x7fffffff) &&
    listed?.czxid === stat.czxid;
  return clean ? 'clean' : 'unclean';
}
