import type { Stat, WatchEvent, ZooKeeperClient } from '../../client/index.js';
import { ZooKeeperError, joinPath } from '../../client/index.js';
import { abandon, giveUpNode } from '../support/abandon.js';
import type { Contender, ContenderKind, Layout } from './contender-name.js';
import { contenderPrefix, indexOfSeq, sortContenders } from './contender-name.js';
import type { Deadline } from '../support/deadline.js';
import type { AcquireMessage } from '../diagnostics.js';
import { deleteGuaranteed } from '../support/guaranteed-delete.js';
import { LockError } from '../support/lock-error.js';
import { Lookahead } from './fast/queue-lookahead.js';
import type { Blockers, QueueWait } from './queue-watch.js';
import { LIST_INSTEAD_OF_READ, SessionLost, keptBlockers, presentBlockers, untilAnswered, waitUntilGone } from './queue-watch.js';
import { awaitSession, ensureLockPath, sessionForCreate } from '../support/reconnect.js';
import type { ReleasedContender } from './fast/sequence-proof.js';
import { provenSole } from './fast/sequence-proof.js';
import { holdsNoUserData, parseRecord } from './fast/release-record.js';
import { fastPaths } from './fast/switch.js';
import type { Listing } from './fast/shared-listing.js';
import { sharedListing } from './fast/shared-listing.js';
import { createMayHaveRun, isTransient } from '../support/transient.js';
import type { Handoff, ParentRead } from './lock-delay.js';
import { joinedHandoff } from './lock-delay.js';
import { timerAt } from '../support/timer-at.js';
import { anySignal } from '../support/any-signal.js';
import type { NodeWatch } from '../lease/lease-monitor.js';
import type { AclOptions, LockAcl } from '../support/lock-acl.js';
import { nodeAcl, pathAcl } from '../support/lock-acl.js';

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

export interface QueuedNode {
  path: string;
  name: string;
  /** The sequence the server appended, as a signed 32-bit number. */
  seq: number;
  stat: Stat;
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

/** Someone deleted our node while it waited (an operator, a forced release): our place in the queue is gone. */
class NodeLost extends Error {}

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
      let { recordOver } = turn;
      let delayed = 0;
      if (turn.handoff.kind === 'clean') recordOver ??= await recordVersion(o, node);
      else {
        // Not clean: the data is read again while we wait anyway, so that our release leaves a record at a version still current.
        // A failed read ends the delay too: its timer and watch must not outlive the acquire.
        const stop = new AbortController();
        try {
          [recordOver, delayed] = await Promise.all([recordVersion(o, node), delayTurn(o, node, turn.handoff.seenAt + o.lockDelay, stop.signal)]);
        } finally {
          stop.abort();
        }
      }
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

export interface Created extends QueuedNode {
  /**
   * The parent's contenders in queue order, listed after the create in the same session (maybe
   * shared with other joins, see shared-listing.ts: only read, never changed); null when the
   * sequence proved ours the only contender, or no listing was asked for.
   */
  queue: readonly Contender[] | null;
  /** With `readFirst`: the parent read right before the create (none when its answer was lost). */
  before?: ParentRead;
  /** The parent's stat in the listing (none without a listing, or when the create's reply was lost). */
  listed?: Stat;
}

/**
 * Creates an EPHEMERAL_SEQUENTIAL node named `<prefix><seq>` under `parent` in protected mode and
 * lists the parent in the same round trip. A missing parent is created as a container; a lost
 * create reply is resolved by adoption, never by a blind second create.
 *
 * With `previous` (our last exclusive hold, its deletion confirmed), the create goes alone and
 * the listing is skipped when the new sequence proves nobody else queued (see provenSole);
 * otherwise the listing follows, one round trip later.
 */
export async function createProtected(
  client: ZooKeeperClient,
  parent: string,
  name: () => { prefix: string; protectionId: string },
  data: Buffer,
  deadline: Deadline,
  options: {
    /** See QueueOptions.previous. */
    previous?: ReleasedContender;
    /** Reject with SESSIONEXPIRED, instead of creating again with the new session, when the session that sent the create ends. */
    failOnExpiry?: boolean;
    /**
     * Create only on this session (one whose node already stands for us elsewhere, a semaphore's
     * queue node): SESSIONEXPIRED at once when the client has another, never a create on it.
     */
    session?: bigint;
    /** False for a node that waits for nobody (a semaphore's lease): no listing of the parent. */
    list?: boolean;
    /** Read the parent right before the create, in the same round trip (see lock-delay.ts). */
    readFirst?: boolean;
    /** False: a missing parent is made PERSISTENT, not as a container the server may reap (and forget the lock's history with). */
    container?: boolean;
    /** The ACLs of our node and of the parent when missing (see lock-acl.ts). */
    acl?: LockAcl;
    /** Share the listing with this client's other joins of `parent` (see shared-listing.ts). */
    shared?: boolean;
  } = {},
): Promise<Created> {
  const { previous, session: only, list: listed = true, readFirst = false, container = true, acl, shared = false } = options;
  const failOnExpiry = options.failOnExpiry === true || only !== undefined;
  for (;;) {
    deadline.check();
    const { prefix, protectionId } = name();
    if (only !== undefined && client.sessionId !== only) throw sessionEnded(parent);
    // The session the create runs on: what adoption, abandon and failOnExpiry go by (see sessionForCreate).
    const session = await sessionForCreate(client, deadline);
    // Sent first: one session's requests run in order, so it reads the parent as it was before our create.
    const reading = readFirst ? readLockPath(client, parent, deadline).catch(() => undefined) : undefined;
    // Bounded by the deadline: a create queued while disconnected must not outlive the acquire.
    const path = joinPath(parent, prefix);
    const create = client.create(path, data, { mode: 'EPHEMERAL_SEQUENTIAL', acl: nodeAcl(client, acl, path), signal: deadline.requestSignal });
    const list = previous || !listed ? undefined : listQueue(client, parent, deadline, shared);
    let ours: { path: string; owner: bigint } | undefined;
    try {
      const created = await create;
      ours = { path: created.path, owner: created.stat.ephemeralOwner };
      const name = created.path.slice(created.path.lastIndexOf('/') + 1);
      const seq = Number(name.slice(prefix.length));
      const before = reading && (await reading);
      if (!listed || (previous && provenSole(previous, { seq, czxid: created.stat.czxid }))) {
        return { path: created.path, name, seq, stat: created.stat, queue: null, before };
      }
      const { queue, stat } = await (list ?? listQueue(client, parent, deadline, shared));
      return { path: created.path, name, seq, stat: created.stat, queue, before, listed: stat };
    } catch (error) {
      list?.catch(() => undefined);
      if (!(error instanceof ZooKeeperError)) throw error;
      if (ours && !createMayHaveRun(error) && error.code !== 'SESSIONEXPIRED') {
        // Our node exists but the listing was refused (no READ on the lock path, say): take it back.
        await deleteGuaranteed(client, ours.path, ours.owner);
        throw error;
      }
      if (error.code === 'NONODE') {
        // The lock path is missing, or was a container the server reaped between our ensure and our create.
        await ensureLockPath(client, parent, { container, acl: pathAcl(acl) }, deadline);
      } else if (createMayHaveRun(error)) {
        // The create may have run: adopt its node, or, when we give up, make sure it goes.
        try {
          deadline.check();
          const adopted = await adoptAfterConnectionLoss(client, parent, prefix, protectionId, session, deadline);
          if (adopted) return adopted;
        } catch (failure) {
          await abandon(client, session, parent, async () => {
            const name = (await client.getChildren(parent)).children.find((child) => child.includes(protectionId));
            return name === undefined ? undefined : { path: joinPath(parent, name) };
          });
          throw failure;
        }
      } else if (error.code !== 'SESSIONEXPIRED') {
        throw error;
      }
      // The session that sent the create has ended, and the node it may have made with it. Else we
      // create again: on the next session, which the loop waits for (sessionForCreate), so no refusal can make it spin.
      if (failOnExpiry && client.sessionId !== session) throw sessionEnded(parent);
    }
  }
}

/** The parent's contenders in queue order, listed after every request this client sent so far: our create included. */
function listQueue(client: ZooKeeperClient, parent: string, deadline: Deadline, shared: boolean): Promise<Listing> {
  if (shared) return sharedListing(client, parent, deadline.requestSignal);
  return client.getChildren(parent, { signal: deadline.requestSignal }).then(({ children, stat }) => ({ queue: sortContenders(children), stat }));
}

function sessionEnded(parent: string): LockError {
  return new LockError('SESSIONEXPIRED', 'the session expired while joining the queue', { path: parent, op: 'acquire' });
}

/**
 * The create's reply was lost with the connection, but the node may exist. Never create blindly
 * again: that leaves a duplicate contender that blocks everyone behind it. Look for our
 * protection id; adopt the node only if our current session owns it, else delete it.
 */
async function adoptAfterConnectionLoss(
  client: ZooKeeperClient,
  lockPath: string,
  prefix: string,
  protectionId: string,
  session: bigint,
  deadline: Deadline,
): Promise<Created | undefined> {
  for (;;) {
    await awaitSession(client, session, deadline);
    try {
      // The session may have moved to a server that has not seen the create yet.
      const signal = deadline.requestSignal;
      await client.sync(lockPath, { signal });
      const { children } = await client.getChildren(lockPath, { signal });
      const name = children.find((child) => child.includes(protectionId));
      if (!name) return undefined;
      const path = joinPath(lockPath, name);
      const stat = await client.exists(path, { signal });
      if (!stat) return undefined;
      if (stat.ephemeralOwner === client.sessionId) return { path, name, seq: Number(name.slice(prefix.length)), stat, queue: sortContenders(children) };
      // Left by our previous, expired session: the server is about to delete it, but until it does
      // it blocks everyone behind it. deleteGuaranteed would not touch another session's node.
      await client.delete(path, { version: stat.version }).catch(() => undefined);
      return undefined;
    } catch (error) {
      if (!(error instanceof ZooKeeperError)) throw error;
      if (error.code === 'NONODE' || error.code === 'SESSIONEXPIRED') return undefined;
      if (!isTransient(error)) throw error;
    }
  }
}

interface Turn {
  /** The lock path's data version a release record may replace; null: release without one; undefined: not read (see lock-delay.ts). */
  recordOver: number | null | undefined;
  /** With a lockDelay: how the lock came to us, and when (performance.now()) we saw the last holder go. */
  handoff?: { kind: Handoff; seenAt: number };
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
    if (o.trace) o.trace.queuePosition ??= 0;
    // Our own last hold, and nobody queued since (provenSole): clean when its holder let it go, not when a hold limit forced it.
    return { recordOver: overOf(node.before), handoff: o.lockDelay ? { kind: o.previous?.forced ? 'unclean' : 'clean', seenAt: performance.now() } : undefined };
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
  if (ahead.near.length === 0 && o.lockDelay) {
    return { recordOver: overOf(node.before), handoff: { kind: joinedHandoff(node.before, node.listed, node.seq, o.lockDelay), seenAt: performance.now() } };
  }
  // What only a contender holding at once judges its join by: not kept while it waits.
  node.before = node.listed = undefined;
  let recordOver: number | null = null;
  /** The blocker whose deletion let us in, when we saw it go, and the lock path as read after that. */
  let last: { gone: Contender; byZklock: boolean | undefined; seenAt: number; read?: RecordRead } | undefined;
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
    if (o.lockDelay && last) {
      // Read after the deletion of the blocker that let us in, unless the check did: a record naming it proves a clean handoff (see release-record.ts).
      const { gone, byZklock } = last;
      const read = (last.read ??= await untilAnswered(o, owner, () => readRecord(o, gone.name)));
      // Clean only by a marked record (see lock-delay.ts). Unclean only when records are left here
      // and the one that let us in was zklock's: a node gone before we read it could be anyone's.
      const kind = read.namesGone
        ? (read.kept ?? -1) >= o.lockDelay ? 'clean' : 'unknown'
        : read.over !== null && byZklock === true ? 'unclean' : 'unknown';
      return afterWait(o, node, ours, { recordOver: read.over, handoff: { kind, seenAt: last.seenAt } });
    }
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
  if (ours?.deleted) throw new NodeLost();
  if (o.client.sessionId !== node.stat.ephemeralOwner) throw new SessionLost();
  return ours ? { ...turn, watch: ours } : turn;
}

/** The version a record of ours may replace, from the read before our create: undefined when there was none to go by. */
function overOf(before: ParentRead | undefined): number | null | undefined {
  if (before === undefined || before === 'missing') return undefined;
  return before !== 'refused' && holdsNoUserData(before.data) ? before.stat.version : null;
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
  // Listed after our create in the same session, so someone deleted it in between (an operator, a forced release): queue again.
  if (queue[at]?.name !== node.name) throw new NodeLost();
  // The first listing's: a queue joined again after a session loss does not replace it (see diagnostics.ts).
  if (o.trace) o.trace.queuePosition ??= at;
  return keptBlockers(queue, at);
}

/**
 * A waiting node can be deleted by someone else; a lease on it would be lost before it began,
 * while a newcomer sees an empty queue. Watched from the start of the wait, sent right before the
 * first blocker's watch, so it costs no round trip. The server notifies in commit order: if our
 * node went before our last blocker did, we hear of it first. A deletion after that is a holder's
 * node deleted, which the lease's own monitor reports. The watch is not removed once we hold (the
 * release fires it); `ignore` makes it harmless.
 */
function watchOwnNode(client: ZooKeeperClient, path: string, onEnd?: () => void): OwnNode {
  return new OwnNode(client, path, onEnd);
}

/** A class, not an object literal with getters and closures: one is kept by every waiter, and its bytes count (see the memory bench). */
class OwnNode implements NodeWatch {
  /** What ended the watch on our node: its deletion, our session's expiry or the client's close. */
  ended: 'deleted' | 'expired' | 'closed' | undefined;
  private ignored = false;
  /** The server answered that the watch is set, and it has not fired since. */
  private armed = false;
  /** Who hears the watch's event once the lease's monitor took it over. */
  private adopter: ((event: WatchEvent) => void) | undefined;

  constructor(
    client: ZooKeeperClient,
    path: string,
    private readonly onEnd: (() => void) | undefined,
  ) {
    const watch = (event: WatchEvent): void => {
      this.armed = false;
      if (this.adopter) this.adopter(event);
      else this.end(event.type === 'deleted' || event.type === 'expired' || event.type === 'closed' ? event.type : undefined);
    };
    client.exists(path, { watch }).then(
      (stat) => {
        if (stat === null) this.end('deleted');
        // Unless it already fired (its event comes before the reply of any later request, not of this one).
        else if (!this.ended) this.armed = true;
      },
      // Not watched across a lost connection: an admin deleting a waiting node then is caught by the lease monitor.
      () => undefined,
    );
  }

  private end(why: OwnNode['ended']): void {
    if (this.ignored || this.ended || !why) return;
    this.ended = why;
    this.onEnd?.();
  }

  adopt(watcher: (event: WatchEvent) => void): boolean {
    if (!this.armed) return false;
    this.adopter = watcher;
    return true;
  }

  get deleted(): boolean {
    return this.ended === 'deleted';
  }

  ignore(): void {
    this.ignored = true;
  }
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

/** Only a zklock holder of the exclusive lock leaves a release record (no data: it went before we read it). */
function mayHaveRecorded(gone: Contender, byZklock: boolean | undefined): boolean {
  return gone.kind === 'exclusive' && byZklock !== false;
}

interface RecordRead {
  /** The lock path's data is a release record naming the blocker that went. */
  namesGone: boolean;
  /** The version a release record of ours may replace, or null when the data is someone's own. */
  over: number | null;
  /** The lockDelay the record naming the blocker was marked with (see lock-delay.ts), if it was. */
  kept?: number | undefined;
}

/**
 * The fast path: reads the lock path's data for a release record naming `gone`. Its proof (see
 * release-record.ts): only a holder writes the record, in the transaction that deletes its node,
 * so `gone` held the lock, so every contender that was ahead of it had gone for good; the rest of
 * our first listing was ahead of `gone`, so nothing is left ahead of us. Notes on the lock whether
 * records answer here (see stillBlocking).
 */
async function readRecord(o: QueueOptions, gone: string): Promise<RecordRead> {
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

/** The version of the lock path's data a record of ours may replace, read while we hold (or are about to): null when it holds someone's data or we may not read it. */
async function recordVersion(o: QueueOptions, node: Created): Promise<number | null> {
  return untilAnswered(o, node.stat.ephemeralOwner, async () => overOf(await readLockPath(o.client, o.lockPath, o.deadline)) ?? null);
}

/** The lock path's data and stat, or 'missing', or 'refused' (NOAUTH). */
async function readLockPath(client: ZooKeeperClient, path: string, deadline: Deadline): Promise<ParentRead> {
  try {
    return await client.getData(path, { signal: deadline.requestSignal });
  } catch (error) {
    if (error instanceof ZooKeeperError && (error.code === 'NONODE' || error.code === 'NOAUTH')) return error.code === 'NONODE' ? 'missing' : 'refused';
    throw error;
  }
}

/**
 * Holds our node until `until` (performance.now()), the lock-delay after an unclean handoff (see
 * lock-delay.ts), bounded by the deadline. Resolves with how long it waited. Ends early when our
 * node is deleted or our session expires (we queue again as a waiter would), when the client
 * closes (CLOSED), and when `stop` aborts (the acquire failed elsewhere; the result is unused).
 */
async function delayTurn(o: QueueOptions, node: Created, until: number, stop: AbortSignal): Promise<number> {
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
    afterWait(o, node, ours, { recordOver: null });
    return performance.now() - started;
  } finally {
    cancel();
    unsubscribe();
    ends.removeEventListener('abort', wake);
    ours.ignore();
  }
}
