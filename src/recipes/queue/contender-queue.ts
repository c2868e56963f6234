import type { Stat } from '../../client/index.js';
import { joinPath } from '../../client/index.js';
import { giveUpNode } from '../support/abandon.js';
import type { Contender, ContenderKind, Layout } from './contender-name.js';
import { contenderPrefix, indexOfSeq, parseContender } from './contender-name.js';
import type { AcquireMessage } from '../diagnostics.js';
import { LockError } from '../support/lock-error.js';
import { Lookahead } from './fast/queue-lookahead.js';
import type { Blockers, QueueWait } from './queue-watch.js';
import { LIST_INSTEAD_OF_READ, SessionLost, keptBlockers, presentBlockers, untilAnswered } from './queue-watch.js';
import { BlockerWait } from './blocker-watch.js';
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
export function acquireInQueue<O extends QueueOptions, T>(o: O, holder: QueueHolder<O, T>): Promise<T> {
  return new Promise<T>((resolve, reject) => new QueueJoin(o, holder, resolve, reject).join());
}

/** What holds the lock once our node does: a lock turns the held node into its lease. */
export interface QueueHolder<O extends QueueOptions, T> {
  /**
   * Our node holds the lock: what the acquire resolves with (or rejects with). From then on the
   * deadline is the holder's to dispose; when the acquire fails in the queue, the queue disposes it.
   */
  [queueHeld](node: HeldNode, o: O): Promise<T>;
}

/** The method a QueueHolder is called by: a symbol, not a name a lock could otherwise have. */
export const queueHeld = Symbol('queueHeld');

interface Turn extends Handed {
  /** See HeldNode.watch. */
  watch?: NodeWatch;
}

/**
 * One acquire's way through the queue, as one object: it runs its steps (create and list, the
 * checks after a blocker went, the lock-delay step) as short async methods, and between them it
 * is parked on its blocker's watch (BlockerWait) with no suspended async frame: a waiter's bytes
 * are counted by the memory bench, and 10,000 waiters must fit in 20 MB. Every step ends in
 * exactly one of: park() on the next blocker, done() with our turn, or failed(): queue again
 * (SessionLost, NodeLost) or give up our node and reject.
 */
class QueueJoin<O extends QueueOptions, T> extends BlockerWait {
  /** Read once: one acquire runs with the fast paths or without them throughout (see fast/switch.ts). */
  private readonly fast = fastPaths();
  /**
   * Our node, once created: its path and stat only (its name and sequence are read back from the
   * path when we hold). A waiter keeps these fields and no object of its own for them.
   */
  private nodePath: string | undefined;
  private stat: Stat | undefined;
  /** The blockers still to wait for, nearest first; `more`: more blocked us than `near` when last listed (see Blockers). */
  private near: Contender[] = [];
  private more = false;
  private ours: OwnNode | undefined;
  private lookahead: Lookahead | undefined;
  private recordOver: number | null = null;
  /** With a lockDelay: the blocker whose deletion let us in (lock-delay-step.ts). */
  private last: LastBlocker | undefined;

  constructor(
    protected override readonly o: O,
    private readonly holder: QueueHolder<O, T>,
    private readonly resolve: (result: T) => void,
    private readonly reject: (error: unknown) => void,
  ) {
    super(o);
  }

  /** Creates our node and takes our place in the queue; again after our session or our node was lost. */
  join(): void {
    this.step(this.enter());
  }

  /** A step's failure goes to failed(); its success has already parked us or settled the acquire. */
  private step(running: Promise<void>): void {
    running.catch((error: unknown) => this.failed(error));
  }

  private async enter(): Promise<void> {
    const { o } = this;
    this.nodePath = this.stat = undefined;
    o.deadline.check();
    const node = await createProtected(o.client, o.lockPath, () => contenderPrefix(o.layout, o.kind, o.role), o.data, o.deadline, {
      previous: this.fast ? o.previous : undefined,
      shared: this.fast,
      failOnExpiry: o.failOnExpiry,
      readFirst: o.lockDelay !== undefined,
      container: o.lockDelay === undefined,
      acl: o.acl,
    });
    this.nodePath = node.path;
    this.stat = node.stat;
    if (node.queue === null) {
      // Proven alone by the sequence (provenSole): nobody queued since our own last hold.
      if (o.trace) o.trace.queuePosition ??= 0;
      return this.done(handedAtOnce(node, o.previous, o.lockDelay));
    }
    let ahead = firstBlockers(o, node);
    if (ahead.near.length > 0 && o.wait === false) {
      // Anyone ahead of a writer holds or waits. A reader shares with writers that downgraded: look.
      if (o.kind === 'exclusive') throw new NotAcquired();
      const candidates = ahead;
      ahead = await untilAnswered(o, node.stat.ephemeralOwner, () => presentBlockers(o, candidates));
      if (ahead.near.length > 0) throw new NotAcquired();
    }
    if (ahead.near.length === 0 && o.lockDelay) return this.done(handedAtOnce(node, undefined, o.lockDelay));
    this.recordOver = null;
    this.last = undefined;
    if (ahead.near.length > 0) this.ours = watchOwnNode(o.client, node.path);
    this.park(ahead);
  }

  /** Waits for the nearest of `ahead` (following the rest meanwhile, see followsRest), or, when none is left, takes our turn. */
  private park(ahead: Blockers): void {
    const { o } = this;
    const { near } = ahead;
    this.near = near;
    this.more = ahead.more !== undefined;
    if (near.length === 0) return this.step(this.afterWait());
    const owner = this.stat!.ephemeralOwner;
    this.lookahead = this.fast && followsRest(o.kind, ahead) ? new Lookahead(o, near.slice(1), owner) : undefined;
    const nearest = near[0]!;
    const path = joinPath(o.lockPath, nearest.name);
    // Its name as a slice of the path the watch keeps anyway, rather than a string of its own.
    near[0] = { name: path.slice(path.lastIndexOf('/') + 1), seq: nearest.seq, kind: nearest.kind };
    this.waitFor(path, owner, o.deadline.bounded ? o.deadline : undefined);
  }

  protected blockerGone(byZklock: boolean | undefined): void {
    this.step(this.afterGone(byZklock));
  }

  protected blockerFailed(error: unknown): void {
    this.failed(error);
  }

  /**
   * Our nearest blocker went: which of the others still block us. The lookahead may know already
   * (no request); else the check (stillBlocking), which may read a release record.
   */
  private async afterGone(byZklock: boolean | undefined): Promise<void> {
    const { o } = this;
    const gone = this.near[0]!;
    // A waiter that did not keep all its blockers looks for them as itself (see Blockers.more).
    const rest: Blockers = { near: this.near.slice(1), more: this.more ? this.asContender() : undefined };
    // Only a lockDelay judges the handoff: no clock read or record of it otherwise.
    if (o.lockDelay) this.last = { gone, byZklock, seenAt: performance.now() };
    if (this.ours?.deleted) throw new NodeLost();
    const { lookahead } = this;
    this.lookahead = undefined;
    const clear = await lookahead?.clear();
    lookahead?.stop();
    if (clear) return this.park({ near: [] });
    const check = await stillBlocking(o, gone.name, this.fast && mayHaveRecorded(gone, byZklock), rest, this.stat!.ephemeralOwner);
    if (check.record) {
      this.recordOver = check.record.over;
      if (this.last) this.last.read = check.record;
    }
    this.park(check.blocking);
  }

  /**
   * The checks between our last blocker's deletion and our turn. Its deletion may have been
   * notified while the last check was on its way; a getData queued across an expiry runs on the
   * new session: our node may be gone although every blocker went. Having read the lock path
   * while waiting, we likely have someone queued behind us: the turn tells them how we went.
   * With a lockDelay, the step that judges how the lock came to us (lock-delay-step.ts).
   */
  private async afterWait(): Promise<void> {
    const { o, ours } = this;
    const owner = this.stat!.ephemeralOwner;
    const turn: Turn = o.lockDelay && this.last ? await handedAfterWait({ ...o, lockDelay: o.lockDelay }, this.last, owner) : { recordOver: o.kind === 'exclusive' ? this.recordOver : null };
    stillOurs(o.client, owner, ours);
    this.stopWatching();
    return this.done(ours ? { ...turn, watch: ours } : turn);
  }

  /** Our node, as the queue named it: its name and sequence read back from its path. */
  private queued(): QueuedNode {
    const path = this.nodePath!;
    const { name, seq } = this.asContender();
    return { path, name, seq, stat: this.stat! };
  }

  private asContender(): Contender {
    const path = this.nodePath!;
    return parseContender(path.slice(path.lastIndexOf('/') + 1))!;
  }

  /** Our turn: with a lockDelay and a handoff to judge, the lock-delay step first (lock-delay-step.ts); then the holder's. */
  private async done(turn: Turn): Promise<void> {
    const { o } = this;
    const node = this.queued();
    let held: HeldNode = { ...node, recordOver: turn.recordOver ?? null, watch: turn.watch };
    if (o.lockDelay && turn.handoff) {
      const { recordOver, delayed } = await serveLockDelay({ client: o.client, lockPath: o.lockPath, kind: o.kind, deadline: o.deadline, lockDelay: o.lockDelay }, node, turn.handoff, turn.recordOver);
      held = { ...held, recordOver, handoff: turn.handoff.kind, delayed };
    }
    this.holder[queueHeld](held, o).then(this.resolve, this.reject);
  }

  /** Our own node's watch and the lookahead end with the wait, however it ends. */
  private stopWatching(): void {
    this.ours?.ignore();
    this.ours = undefined;
    this.lookahead?.stop();
    this.lookahead = undefined;
  }

  /**
   * A step failed. Our session ended (SessionLost) or someone deleted our node (NodeLost): queue
   * again at the back, as Curator does, while the deadline allows (enter() checks it), or fail
   * with SESSIONEXPIRED when asked to. Anything else: our node goes (see giveUpNode), then the
   * acquire rejects; requests bounded by the deadline reject with the client's ABORTED when it
   * passes, wherever they were, so a passed deadline rejects with its own LockError.
   */
  private failed(error: unknown): void {
    const { o, nodePath, stat } = this;
    this.stopWatching();
    const reject = (cause: unknown): void => {
      o.deadline.dispose();
      this.reject(o.deadline.failure(cause));
    };
    if (nodePath && error instanceof SessionLost) {
      // Our node went with the session: nothing to give up.
      if (o.failOnExpiry) return reject(new LockError('SESSIONEXPIRED', 'the session expired while waiting', { path: o.lockPath, op: 'acquire' }));
      return this.join();
    }
    if (nodePath && error instanceof NodeLost) return this.join();
    if (!nodePath || !stat) return reject(error);
    this.nodePath = this.stat = undefined;
    giveUpNode(o.client, nodePath, stat.ephemeralOwner, o.deadline).then(() => reject(error), reject);
  }
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
