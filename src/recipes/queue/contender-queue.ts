import { giveUpNode } from '../support/abandon.js';
import type { ContenderKind, Layout } from './contender-name.js';
import { contenderPrefix, indexOfSeq } from './contender-name.js';
import type { AcquireMessage } from '../diagnostics.js';
import { LockError } from '../support/lock-error.js';
import { Lookahead } from './fast/queue-lookahead.js';
import type { Blockers, QueueWait } from './queue-watch.js';
import { LIST_INSTEAD_OF_READ, SessionLost, keptBlockers, presentBlockers, untilAnswered, waitUntilGone } from './queue-watch.js';
import type { ReleasedContender } from './fast/sequence-proof.js';
import type { RecordRead } from './fast/release-record.js';
import { mayHaveRecorded, readRecord } from './fast/release-record.js';
import { fastPaths } from './fast/switch.js';
import type { Handoff } from './lock-delay.js';
import type { Handed, LastBlocker } from './lock-delay-step.js';
import { handedAfterWait, handedAtOnce, serveLockDelay } from './lock-delay-step.js';
import type { Created, QueuedNode } from './protected-create.js';
import { createProtected } from './protected-create.js';
import type { OwnNode } from './own-node.js';
import { NodeLost, stillOurs, watchOwnNode } from './own-node.js';
import type { NodeWatch } from '../lease/lease-monitor.js';
import type { AclOptions } from '../support/lock-acl.js';

export interface QueueOptions extends QueueWait, AclOptions {
  layout: Layout;
  /** 'lock' names (`-lock-`) for mutexes, 'rw' names (`__READ__`/`__WRIT__`) for read/write locks. */
  role: 'lock' | 'rw';
  data: Buffer;
  /** Fail with SESSIONEXPIRED instead of re-queueing with the new session when the session expires while waiting. */
  failOnExpiry: boolean;
  /** False for tryAcquire: give up (deleting our node) instead of waiting when anyone is ahead. */
  wait?: boolean;
  /** Our last exclusive hold of this lock, deleted before this attempt began: lets the sequence alone prove an uncontended acquire. */
  previous?: ReleasedContender;
  /** Shared by the acquisitions of one lock: whether the last look for a release record found none. */
  records: { missed: boolean };
  /** Exclusive queue locks only, > 0 or absent: how long (ms) a holder after an unclean handoff waits before resolving (see lock-delay.ts). */
  lockDelay?: number;
  /** A traced acquire's message: the queue position goes there (see diagnostics.ts). */
  trace?: AcquireMessage | undefined;
}

export interface HeldNode extends QueuedNode {
  /** The lock path's data version a release record naming our node may replace (see release-record.ts); null: release without one. */
  recordOver: number | null;
  /** With a lockDelay: how the lock came to us, and how long (ms) the acquire waited for that. */
  handoff?: Handoff;
  delayed?: number;
  /** The watch our node had while it waited, still set: the lease's monitor takes it over (see watchOwnNode). */
  watch?: NodeWatch;
}

/** tryAcquire found someone ahead of us. */
export class NotAcquired extends Error {}

/**
 * Joins the queue under `lockPath` and resolves when our node holds the lock.
 *
 * One round trip when uncontended: the listing is pipelined behind the create (one session's
 * requests run in order, so it already contains our node). Nodes ahead of us can only go away,
 * so that first listing bounds all our waiting: we watch the nearest blocker, and when it goes we
 * check the rest of the listing in one round trip and watch the nearest one still there, until
 * none is left. An exclusive waiter near the front follows the rest meanwhile (queue-lookahead.ts)
 * and, when it already knows they are gone, holds without that check.
 *
 * On timeout or abort our node is deleted before the rejection while connected (see giveUpNode:
 * not connected, or past a brief bound, it goes in the background); when the session expires while
 * waiting we queue again at the back with the new session while the deadline allows.
 */
export function acquireInQueue(o: QueueOptions): Promise<HeldNode> {
  // Requests bounded by the deadline reject with the client's ABORTED when it passes, wherever
  // they were: every lock rejects with the deadline's own LockError (LOCK_TIMEOUT or ABORTED).
  // Not an async function: one suspended frame fewer kept by every waiter.
  return joinQueue(o).catch((error: unknown) => {
    throw o.deadline.failure(error);
  });
}

async function joinQueue(o: QueueOptions): Promise<HeldNode> {
  // Read once: one acquire runs with the fast paths or without them throughout (see fast/switch.ts).
  const fast = fastPaths();
  for (;;) {
    o.deadline.check();
    const node = await createProtected(o.client, o.lockPath, () => contenderPrefix(o.layout, o.kind, o.role), o.data, o.deadline, {
      previous: fast ? o.previous : undefined,
      shared: fast,
      failOnExpiry: o.failOnExpiry,
      readFirst: o.lockDelay !== undefined,
      container: o.lockDelay === undefined,
      acl: o.acl,
    });
    try {
      const turn = await waitForTurn(o, node, fast);
      if (!o.lockDelay || !turn.handoff) return { path: node.path, name: node.name, seq: node.seq, stat: node.stat, recordOver: turn.recordOver ?? null, watch: turn.watch };
      // The lock-delay step (lock-delay-step.ts): a handoff not proven clean is served before we hold.
      const { recordOver, delayed } = await serveLockDelay({ client: o.client, lockPath: o.lockPath, kind: o.kind, deadline: o.deadline, lockDelay: o.lockDelay }, node, turn.handoff, turn.recordOver);
      return { path: node.path, name: node.name, seq: node.seq, stat: node.stat, recordOver, handoff: turn.handoff.kind, delayed, watch: turn.watch };
    } catch (error) {
      if (error instanceof SessionLost) {
        if (o.failOnExpiry) throw new LockError('SESSIONEXPIRED', 'the session expired while waiting', { path: o.lockPath, op: 'acquire' });
        continue;
      }
      // Queue again at the back, as Curator does; the deadline bounds how often.
      if (error instanceof NodeLost) continue;
      await giveUpNode(o.client, node.path, node.stat.ephemeralOwner, o.deadline);
      throw error;
    }
  }
}

interface Turn extends Handed {
  /** See HeldNode.watch. */
  watch?: NodeWatch;
}

/**
 * Resolves when our node holds the lock, with what our release may record and, with a lockDelay,
 * how the lock came to us. Without `fast` (see fast/switch.ts) the plain queue only: no lookahead,
 * and no release record read in place of the check; a lockDelay still reads the lock path once
 * it holds, as the feature's own proof of a clean handoff (lock-delay.ts).
 */
async function waitForTurn(o: QueueOptions, node: Created, fast: boolean): Promise<Turn> {
  if (node.queue === null) {
    // Proven alone by the sequence (provenSole): nobody queued since our own last hold.
    if (o.trace) o.trace.queuePosition ??= 0;
    return handedAtOnce(node, o.previous, o.lockDelay);
  }
  let ahead = firstBlockers(o, node);
  const owner = node.stat.ephemeralOwner;
  if (ahead.near.length > 0 && o.wait === false) {
    // Anyone ahead of a writer holds or waits. A reader shares with writers that downgraded: look.
    if (o.kind === 'exclusive') throw new NotAcquired();
    const candidates = ahead;
    ahead = await untilAnswered(o, owner, () => presentBlockers(o, candidates));
    if (ahead.near.length > 0) throw new NotAcquired();
  }
  if (ahead.near.length === 0 && o.lockDelay) return handedAtOnce(node, undefined, o.lockDelay);
  // What only a contender holding at once judges its join by: not kept while it waits.
  node.before = node.listed = undefined;
  let recordOver: number | null = null;
  let last: LastBlocker | undefined;
  const ours = ahead.near.length > 0 ? watchOwnNode(o.client, node.path) : undefined;
  let lookahead: Lookahead | undefined;
  try {
    while (ahead.near.length > 0) {
      const gone = ahead.near[0]!;
      lookahead = fast && followsRest(o.kind, ahead) ? new Lookahead(o, ahead.near.slice(1), owner) : undefined;
      const byZklock = await waitUntilGone(o, gone, owner);
      // Only a lockDelay judges the handoff: no clock read or record of it otherwise.
      if (o.lockDelay) last = { gone, byZklock, seenAt: performance.now() };
      if (ours?.deleted) throw new NodeLost();
      if (await lookahead?.clear()) break;
      lookahead?.stop();
      const check = await stillBlocking(o, gone.name, fast && mayHaveRecorded(gone, byZklock), { near: ahead.near.slice(1), more: ahead.more }, owner);
      ahead = check.blocking;
      if (check.record) {
        recordOver = check.record.over;
        if (last) last.read = check.record;
      }
    }
    // With a lockDelay, the step that judges how the lock came to us (lock-delay-step.ts).
    if (o.lockDelay && last) return afterWait(o, node, ours, await handedAfterWait({ ...o, lockDelay: o.lockDelay }, last, owner));
    return afterWait(o, node, ours, { recordOver: o.kind === 'exclusive' ? recordOver : null });
  } finally {
    ours?.ignore();
    lookahead?.stop();
  }
}

/**
 * The checks between our last blocker's deletion and our turn. Its deletion may have been
 * notified while the last check was on its way; a getData queued across an expiry runs on the
 * new session: our node may be gone although every blocker went. Having read the lock path while
 * waiting, we likely have someone queued behind us: `turn` tells them how we went.
 */
function afterWait(o: QueueOptions, node: Created, ours: OwnNode | undefined, turn: Turn): Turn {
  stillOurs(o.client, node.stat.ephemeralOwner, ours);
  return ours ? { ...turn, watch: ours } : turn;
}

/**
 * Whether to follow the rest of `ahead` while waiting for its nearest (see queue-lookahead.ts).
 * Only for an exclusive waiter: the readers behind a writer all wait for it, and each following
 * the writer ahead of it too would double the wake-ups of every writer's release. Not as far
 * as a check could need a listing: each step would list the whole queue, and long
 * queues are handed down in O(1) per handoff by release records instead (release-record.ts). A
 * waiter that follows reads no lock path and so leaves no record: the first waiter beyond the
 * lookahead's reach, whose nearest then left none, checks with one multiRead (readEach; one
 * node fewer than would need a listing), reads the lock path in doing so and records its own
 * release for those behind it.
 */
function followsRest(kind: ContenderKind, ahead: Blockers): boolean {
  return kind === 'exclusive' && !ahead.more && ahead.near.length > 1 && ahead.near.length - 1 < LIST_INSTEAD_OF_READ;
}

/**
 * Our blockers in the listing that followed our create, the nearest few kept (see Blockers): the
 * listing itself goes, so that a waiter's heap does not grow with its place in the queue.
 */
function firstBlockers(o: QueueOptions, node: Created): Blockers {
  const queue = node.queue!;
  node.queue = null;
  const at = indexOfSeq(queue, node.seq);
  if (queue[at]?.name !== node.name) {
    // Listed on a later session than our create's (a shared listing sent after an expiry, see
    // shared-listing.ts): our node went with its session, as for a wait that outlives it.
    stillOurs(o.client, node.stat.ephemeralOwner, undefined);
    // Listed after our create in the same session, so someone deleted it in between (an operator, a forced release): queue again.
    throw new NodeLost();
  }
  // The first listing's: a queue joined again after a session loss does not replace it (see diagnostics.ts).
  if (o.trace) o.trace.queuePosition ??= at;
  return keptBlockers(queue, at);
}

interface Check {
  /** The candidates that still block us, nearest first. */
  blocking: Blockers;
  /** Set when the lock path was read after `gone` went. */
  record?: RecordRead;
}

/**
 * After the nearest blocker `gone` went: which of `candidates` (the rest of our first listing,
 * nearest first) still block us. Usually `gone` held the lock and released it, so everyone ahead
 * of it is gone too: all the rest are checked in one round trip rather than watched one by one.
 *
 * The answer is the plain check, presentBlockers. When `gone` may have left a release record, the
 * fast path readRecord may answer first; the plain check then goes only on a miss or, while
 * records keep missing on this lock, pipelined right behind the record read, so that a miss costs
 * no extra round trip (one session's replies come in order: the record's answers first).
 */
async function stillBlocking(o: QueueOptions, gone: string, lookForRecord: boolean, candidates: Blockers, owner: bigint): Promise<Check> {
  if (candidates.near.length === 0 && !candidates.more) return { blocking: candidates };
  let record: RecordRead | undefined;
  return untilAnswered(o, owner, async () => {
    const reading = lookForRecord && !record ? readRecord(o, gone) : undefined;
    const plain = !reading || o.records.missed ? presentBlockers(o, candidates) : undefined;
    // Not awaited when the record answers (or its read fails first): its outcome no longer matters.
    plain?.catch(() => undefined);
    if (reading) {
      record = await reading;
      if (record.namesGone) return { blocking: { near: [] }, record };
    }
    return { blocking: await (plain ?? presentBlockers(o, candidates)), record };
  });
}
