import type { Stat, ZooKeeperClient } from '../client/index.js';
import { ZooKeeperError, joinPath } from '../client/index.js';
import { abandon, giveUpNode } from './abandon.js';
import type { Contender, ContenderKind, Layout } from './contender-name.js';
import { blockers, contenderPrefix, sortContenders } from './contender-name.js';
import type { Deadline } from './deadline.js';
import type { AcquireMessage } from './diagnostics.js';
import { deleteGuaranteed } from './guaranteed-delete.js';
import { LockError } from './lock-error.js';
import { writtenByZklock } from './owner-data.js';
import { Lookahead } from './queue-lookahead.js';
import type { QueueWait } from './queue-watch.js';
import { LIST_INSTEAD_OF_READ, SessionLost, presentBlockers, untilAnswered, waitUntilGone } from './queue-watch.js';
import { awaitSession } from './reconnect.js';
import type { ReleasedContender } from './sequence-proof.js';
import { provenSole } from './sequence-proof.js';
import { holdsNoUserData, recordsRelease } from './release-record.js';
import { createMayHaveRun, isTransient } from './transient.js';

export interface QueueOptions extends QueueWait {
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
export async function acquireInQueue(o: QueueOptions): Promise<HeldNode> {
  try {
    return await joinQueue(o);
  } catch (error) {
    // Requests bounded by the deadline reject with the client's ABORTED when it passes, wherever
    // they were: every lock rejects with the deadline's own LockError (LOCK_TIMEOUT or ABORTED).
    throw o.deadline.expired ? (o.deadline.signal.reason as LockError) : error;
  }
}

async function joinQueue(o: QueueOptions): Promise<HeldNode> {
  for (;;) {
    o.deadline.check();
    const node = await createProtected(o.client, o.lockPath, () => contenderPrefix(o.layout, o.kind, o.role), o.data, o.deadline, {
      previous: o.previous,
      failOnExpiry: o.failOnExpiry,
    });
    try {
      const recordOver = await waitForTurn(o, node);
      return { path: node.path, name: node.name, seq: node.seq, stat: node.stat, recordOver };
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
  /** The parent's children, listed right after the create in the same session; null when the sequence proved ours the only contender, or no listing was asked for. */
  children: string[] | null;
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
  } = {},
): Promise<Created> {
  const { previous, session: only, list: listed = true } = options;
  const failOnExpiry = options.failOnExpiry === true || only !== undefined;
  for (;;) {
    deadline.check();
    const { prefix, protectionId } = name();
    const session = client.sessionId;
    if (only !== undefined && session !== only) throw sessionEnded(parent);
    // Bounded by the deadline: a create queued while disconnected must not outlive the acquire.
    const create = client.create(joinPath(parent, prefix), data, { mode: 'EPHEMERAL_SEQUENTIAL', signal: deadline.requestSignal });
    const list = previous || !listed ? undefined : client.getChildren(parent, { signal: deadline.requestSignal });
    let ours: { path: string; owner: bigint } | undefined;
    try {
      const created = await create;
      ours = { path: created.path, owner: created.stat.ephemeralOwner };
      const name = created.path.slice(created.path.lastIndexOf('/') + 1);
      const seq = Number(name.slice(prefix.length));
      if (!listed || (previous && provenSole(previous, { seq, czxid: created.stat.czxid }))) {
        return { path: created.path, name, seq, stat: created.stat, children: null };
      }
      const { children } = await (list ?? client.getChildren(parent, { signal: deadline.requestSignal }));
      return { path: created.path, name, seq, stat: created.stat, children };
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
        await deadline.race(client.ensurePath(parent, { container: true, signal: deadline.requestSignal }));
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
      // The session that sent the create has ended, and the node it may have made with it.
      if (failOnExpiry && client.sessionId !== session) throw sessionEnded(parent);
      // Create again only on a session that can hold a node: refused at once otherwise, the loop would spin.
      if (error.code === 'SESSIONEXPIRED') await awaitSession(client, undefined, deadline);
    }
  }
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
      if (stat.ephemeralOwner === client.sessionId) return { path, name, seq: Number(name.slice(prefix.length)), stat, children };
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

/** Resolves when our node holds the lock, with the version of the lock path a release record may replace (null: release without one). */
async function waitForTurn(o: QueueOptions, node: Created): Promise<number | null> {
  if (node.children === null) {
    if (o.trace) o.trace.queuePosition ??= 0;
    return null;
  }
  const queue = sortContenders(node.children);
  const self = queue.find((c) => c.name === node.name);
  if (!self) throw new ZooKeeperError('PROTOCOL_ERROR', 'our node is missing from a listing taken after its creation', { path: node.path });
  // The first listing's: a queue joined again after a session loss does not replace it (see diagnostics.ts).
  if (o.trace) o.trace.queuePosition ??= queue.indexOf(self);
  const owner = node.stat.ephemeralOwner;
  let ahead = blockers(queue, self);
  if (ahead.length > 0 && o.wait === false) {
    // Anyone ahead of a writer holds or waits. A reader shares with writers that downgraded: look.
    if (o.kind === 'exclusive') throw new NotAcquired();
    ahead = await untilAnswered(o, owner, () => presentBlockers(o, ahead));
    if (ahead.length > 0) throw new NotAcquired();
  }
  let recordOver: number | null = null;
  const ours = ahead.length > 0 ? watchOwnNode(o.client, node.path) : undefined;
  let lookahead: Lookahead | undefined;
  try {
    while (ahead.length > 0) {
      const gone = ahead[0]!;
      lookahead = followsRest(o.kind, ahead) ? new Lookahead(o, ahead.slice(1), owner) : undefined;
      const data = await waitUntilGone(o, gone, owner);
      if (ours?.deleted) throw new NodeLost();
      if (await lookahead?.clear()) break;
      lookahead?.stop();
      const check = await stillBlocking(o, gone.name, mayHaveRecorded(gone, data), ahead.slice(1), owner);
      ahead = check.blocking;
      if (check.recordOver !== undefined) recordOver = check.recordOver;
    }
    // Its deletion may have been notified while the last check was on its way.
    if (ours?.deleted) throw new NodeLost();
  } finally {
    ours?.ignore();
    lookahead?.stop();
  }
  // A getData queued across an expiry runs on the new session: our node may be gone although every blocker went.
  if (o.client.sessionId !== node.stat.ephemeralOwner) throw new SessionLost();
  // Having read the lock path while waiting, we likely have someone queued behind us: tell them how we went.
  return o.kind === 'exclusive' ? recordOver : null;
}

/**
 * Whether to follow the rest of `ahead` while waiting for its nearest (see queue-lookahead.ts).
 * Only for an exclusive waiter: the readers behind a writer all wait for it, and each following
 * the writer ahead of it too would double the wake-ups of every writer's release. Not as far
 * as a check could need a listing: each step would list the whole queue, and long
 * queues are handed down in O(1) per handoff by release records instead (release-record.ts). A
 * waiter that follows reads no lock path and so leaves no record: the first waiter beyond the
 * lookahead's reach, whose nearest then left none, checks with one multiRead (one node fewer
 * than would need a listing), reads the lock path in doing so and records its own release for
 * those behind it.
 */
function followsRest(kind: ContenderKind, ahead: readonly Contender[]): boolean {
  return kind === 'exclusive' && ahead.length > 1 && ahead.length - 1 < LIST_INSTEAD_OF_READ;
}

/**
 * A waiting node can be deleted by someone else; a lease on it would be lost before it began,
 * while a newcomer sees an empty queue. Watched from the start of the wait, sent right before the
 * first blocker's watch, so it costs no round trip. The server notifies in commit order: if our
 * node went before our last blocker did, we hear of it first. A deletion after that is a holder's
 * node deleted, which the lease's own monitor reports. The watch is not removed once we hold (the
 * release fires it); `ignore` makes it harmless.
 */
function watchOwnNode(client: ZooKeeperClient, path: string): { readonly deleted: boolean; ignore(): void } {
  let deleted = false;
  let ignored = false;
  client.exists(path, { watch: (event) => (deleted ||= !ignored && event.type === 'deleted') }).then(
    (stat) => (deleted ||= !ignored && stat === null),
    // Not watched across a lost connection: an admin deleting a waiting node then is caught by the lease monitor.
    () => undefined,
  );
  return {
    get deleted() {
      return deleted;
    },
    ignore: () => (ignored = true),
  };
}

interface Check {
  /** The candidates that still block us, nearest first. */
  blocking: Contender[];
  /** Set when the lock path was read: the version a release record may replace, or null when it holds someone's data. */
  recordOver?: number | null;
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
async function stillBlocking(o: QueueOptions, gone: string, lookForRecord: boolean, candidates: Contender[], owner: bigint): Promise<Check> {
  if (candidates.length === 0) return { blocking: [] };
  let record: RecordRead | undefined;
  return untilAnswered(o, owner, async () => {
    const reading = lookForRecord && !record ? readRecord(o, gone) : undefined;
    const plain = !reading || o.records.missed ? presentBlockers(o, candidates) : undefined;
    // Not awaited when the record answers (or its read fails first): its outcome no longer matters.
    plain?.catch(() => undefined);
    if (reading) {
      record = await reading;
      if (record.namesGone) return { blocking: [], recordOver: record.over };
    }
    return { blocking: await (plain ?? presentBlockers(o, candidates)), recordOver: record?.over };
  });
}

/** Only a zklock holder of the exclusive lock leaves a release record (no data: it went before we read it). */
function mayHaveRecorded(gone: Contender, data: Buffer | undefined): boolean {
  return gone.kind === 'exclusive' && (data === undefined || writtenByZklock(data));
}

interface RecordRead {
  /** The lock path's data is a release record naming the blocker that went. */
  namesGone: boolean;
  /** The version a release record of ours may replace, or null when the data is someone's own. */
  over: number | null;
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
  o.records.missed = !recordsRelease(read.data, gone);
  return { namesGone: !o.records.missed, over: holdsNoUserData(read.data) ? read.stat.version : null };
}

