import type { Stat, ZooKeeperClient } from '../../client/index.js';
import { ZooKeeperError, joinPath } from '../../client/index.js';
import { abandon } from '../support/abandon.js';
import type { Contender } from './contender-name.js';
import { sortContenders } from './contender-name.js';
import type { Deadline } from '../support/deadline.js';
import { deleteGuaranteed } from '../support/guaranteed-delete.js';
import { LockError } from '../support/lock-error.js';
import { awaitSession, ensureLockPath, sessionForCreate } from '../support/reconnect.js';
import type { ReleasedContender } from './fast/sequence-proof.js';
import { provenSole } from './fast/sequence-proof.js';
import type { Listing } from './fast/shared-listing.js';
import { sharedListing } from './fast/shared-listing.js';
import { createMayHaveRun, isTransient } from '../support/transient.js';
import type { ParentRead } from './lock-delay.js';
import type { LockAcl } from '../support/lock-acl.js';
import { nodeAcl, pathAcl } from '../support/lock-acl.js';

export interface QueuedNode {
  path: string;
  name: string;
  /** The sequence the server appended, as a signed 32-bit number. */
  seq: number;
  stat: Stat;
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
    // Awaited after the create, and failures are taken there; marked handled now because a shared
    // listing can fail first: sent once the one before it is answered, it is refused at once when
    // the client has closed meanwhile, while our create is still on its way (an unhandled
    // rejection would end the process).
    list?.catch(() => undefined);
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

/** The lock path's data and stat, or 'missing', or 'refused' (NOAUTH). */
export async function readLockPath(client: ZooKeeperClient, path: string, deadline: Deadline): Promise<ParentRead> {
  try {
    return await client.getData(path, { signal: deadline.requestSignal });
  } catch (error) {
    if (error instanceof ZooKeeperError && (error.code === 'NONODE' || error.code === 'NOAUTH')) return error.code === 'NONODE' ? 'missing' : 'refused';
    throw error;
  }
}
