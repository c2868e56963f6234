import { ZooKeeperError } from '../../client/index.js';
import type { Handoff, ParentRead } from './lock-delay.js';
import { joinedHandoff, waitedHandoff } from './lock-delay.js';
import type { Contender } from './contender-name.js';
import type { RecordRead, RecordReader } from './fast/release-record.js';
import { holdsNoUserData, readRecord } from './fast/release-record.js';
import type { ReleasedContender } from './fast/sequence-proof.js';
import type { Created, QueuedNode } from './protected-create.js';
import { readLockPath } from './protected-create.js';
import { watchOwnNode, stillOurs } from './own-node.js';
import type { QueueWait } from './queue-watch.js';
import { SessionLost, untilAnswered } from './queue-watch.js';
import { timerAt } from '../support/timer-at.js';
import { anySignal } from '../support/any-signal.js';

/** What the lock-delay step needs of a waiter. */
export interface DelayedWait extends QueueWait {
  /** > 0: how long (ms) a holder after an unclean handoff waits before resolving. */
  lockDelay: number;
}

/** What a contender's release may record, and with a lockDelay how the lock came to it. */
export interface Handed {
  /** The lock path's data version a release record may replace; null: release without one; undefined: not read. */
  recordOver: number | null | undefined;
  /** With a lockDelay: how the lock came to us, and when (performance.now()) we saw the last holder go. */
  handoff?: { kind: Handoff; seenAt: number };
}

/**
 * A contender that holds at once: proven alone by the sequence (`previous`, our own last hold,
 * see sequence-proof.ts), else nobody ahead in the listing after our create. Without a lockDelay
 * only the record version counts; with one, the handoff is judged from the join (lock-delay.ts).
 */
export function handedAtOnce(node: Created, previous: ReleasedContender | undefined, lockDelay: number | undefined): Handed {
  const recordOver = overOf(node.before);
  if (!lockDelay) return { recordOver };
  // Our own last hold, and nobody queued since: clean when its holder let it go, not when a hold limit forced it.
  const kind = previous ? (previous.forced ? 'unclean' : 'clean') : joinedHandoff(node.before, node.listed, node.seq, lockDelay);
  return { recordOver, handoff: { kind, seenAt: performance.now() } };
}

/** The blocker whose deletion let us in, when we saw it go, and the lock path as read after that (if the check read it). */
export interface LastBlocker {
  gone: Contender;
  byZklock: boolean | undefined;
  seenAt: number;
  read?: RecordRead | undefined;
}

/**
 * A contender that waited, with a lockDelay: the lock path read after the deletion of the
 * blocker that let us in (unless the check read it already), which tells how the lock came to
 * us (waitedHandoff) and what our release may record.
 */
export async function handedAfterWait(o: RecordReader & { lockDelay: number }, last: LastBlocker, owner: bigint): Promise<Handed> {
  const read = (last.read ??= await untilAnswered(o, owner, () => readRecord(o, last.gone.name)));
  return { recordOver: read.over, handoff: { kind: waitedHandoff(read, last.byZklock, o.lockDelay), seenAt: last.seenAt } };
}

/**
 * The lock-delay step, composed in after the queue's wait for our turn (see lock-delay.ts): a
 * handoff proven clean passes at once; any other is served: our node is kept `lockDelay` ms from
 * when we saw the last holder go. Either way the lock path is read, so that our release leaves a
 * record at a version still current. `recordOver` is what the wait read already, if anything.
 */
export async function serveLockDelay(o: DelayedWait, node: QueuedNode, handoff: { kind: Handoff; seenAt: number }, recordOver: number | null | undefined): Promise<{ recordOver: number | null; delayed: number }> {
  if (handoff.kind === 'clean') return { recordOver: recordOver ?? (await recordVersion(o, node)), delayed: 0 };
  // Not clean: the data is read again while we wait anyway, so that our release leaves a record at a version still current.
  // A failed read ends the delay too: its timer and watch must not outlive the acquire.
  const stop = new AbortController();
  try {
    const [over, delayed] = await Promise.all([recordVersion(o, node), delayTurn(o, node, handoff.seenAt + o.lockDelay, stop.signal)]);
    return { recordOver: over, delayed };
  } finally {
    stop.abort();
  }
}

/** The version a record of ours may replace, from the read before our create: undefined when there was none to go by. */
export function overOf(before: ParentRead | undefined): number | null | undefined {
  if (before === undefined || before === 'missing') return undefined;
  return before !== 'refused' && holdsNoUserData(before.data) ? before.stat.version : null;
}

/** The version of the lock path's data a record of ours may replace, read while we hold (or are about to): null when it holds someone's data or we may not read it. */
async function recordVersion(o: QueueWait, node: QueuedNode): Promise<number | null> {
  return untilAnswered(o, node.stat.ephemeralOwner, async () => overOf(await readLockPath(o.client, o.lockPath, o.deadline)) ?? null);
}

/**
 * Holds our node until `until` (performance.now()), the lock-delay after an unclean handoff (see
 * lock-delay.ts), bounded by the deadline. Resolves with how long it waited. Ends early when our
 * node is deleted or our session expires (we queue again as a waiter would), when the client
 * closes (CLOSED), and when `stop` aborts (the acquire failed elsewhere; the result is unused).
 */
async function delayTurn(o: DelayedWait, node: QueuedNode, until: number, stop: AbortSignal): Promise<number> {
  const started = performance.now();
  if (until <= started) return 0;
  let wake!: () => void;
  const woken = new Promise<void>((resolve) => (wake = resolve));
  // A deletion later than the watch's answer is the lease monitor's to report, as for any holder.
  const ours = watchOwnNode(o.client, node.path, wake);
  // The watch reports a close or an expiry only once set: one whose exists failed (a connection
  // lost as the delay began) would leave the close unheard until the delay ran out.
  const unsubscribe = o.client.onState((event) => {
    if (event === 'closed' || event === 'expired') wake();
  });
  // Unref'd: a delay alone must not keep the process alive; the session's socket does while it lasts.
  const cancel = timerAt(until, wake, true);
  const bound = o.deadline.requestSignal;
  const ends = bound ? anySignal([bound, stop]) : stop;
  ends.addEventListener('abort', wake, { once: true });
  // Aborted already (the listener would never hear it): no waiting out the delay.
  if (ends.aborted) wake();
  try {
    await woken;
    o.deadline.check();
    // Closing deletes our node with the session, and that deletion may be heard first: not a node lost to queue again for.
    if (ours.ended === 'closed' || o.client.closing) throw new ZooKeeperError('CLOSED', 'client closed during the lock-delay', { path: o.lockPath, op: o.deadline.op });
    if (ours.ended === 'expired') throw new SessionLost();
    stillOurs(o.client, node.stat.ephemeralOwner, ours);
    return performance.now() - started;
  } finally {
    cancel();
    unsubscribe();
    ends.removeEventListener('abort', wake);
    ours.ignore();
  }
}
