import type { Stat, WatchEvent, ZooKeeperClient } from '../client/index.js';
import { ZooKeeperError, joinPath } from '../client/index.js';
import type { Contender, ContenderKind, Layout } from './contender-name.js';
import { blockers, contenderPrefix, sortContenders } from './contender-name.js';
import type { Deadline } from './deadline.js';
import { deleteGuaranteed } from './guaranteed-delete.js';
import { LockError } from './lock-error.js';

export interface QueueOptions {
  client: ZooKeeperClient;
  lockPath: string;
  kind: ContenderKind;
  layout: Layout;
  /** 'lock' names (`-lock-`) for mutexes, 'rw' names (`__READ__`/`__WRIT__`) for read/write locks. */
  role: 'lock' | 'rw';
  data: Buffer;
  deadline: Deadline;
  /** Fail with SESSION_EXPIRED instead of re-queueing with the new session when the session expires while waiting. */
  failOnExpiry: boolean;
  /** Our own contenders that must not block us (the write node of a downgrading holder). */
  ignore?: ReadonlySet<string>;
  /** Called once per watch event a waiter receives (for herd measurements). */
  onWake?: () => void;
}

export interface QueuedNode {
  path: string;
  name: string;
  stat: Stat;
}

/** The session our node belonged to has ended: the node is gone with it. */
class SessionLost extends Error {}

/**
 * Joins the queue under `lockPath` and resolves when our node holds the lock.
 *
 * One round trip when uncontended: the listing is pipelined behind the create (one session's
 * requests run in order, so it already contains our node). Waiting costs no further listing:
 * nodes ahead of us can only go away, so we watch the nearest blocker, and when it goes the next
 * one down the first listing (NONODE: skip it) until none is left.
 *
 * On timeout or abort our node is deleted before the rejection; when the session expires while
 * waiting we queue again at the back with the new session while the deadline allows.
 */
export async function acquireInQueue(o: QueueOptions): Promise<QueuedNode> {
  for (;;) {
    o.deadline.check();
    const node = await createProtected(o.client, o.lockPath, () => contenderPrefix(o.layout, o.kind, o.role), o.data, o.deadline);
    try {
      await waitForTurn(o, node);
      return node;
    } catch (error) {
      if (error instanceof SessionLost) {
        if (o.failOnExpiry) throw new LockError('SESSION_EXPIRED', 'the session expired while waiting', { path: o.lockPath, op: 'acquire' });
        continue;
      }
      await deleteGuaranteed(o.client, node.path, node.stat.ephemeralOwner);
      throw error;
    }
  }
}

export interface Created extends QueuedNode {
  /** The parent's children, listed right after the create in the same session. */
  children: string[];
}

/**
 * Creates an EPHEMERAL_SEQUENTIAL node named `<prefix><seq>` under `parent` in protected mode and
 * lists the parent in the same round trip. A missing parent is created as a container; a lost
 * create reply is resolved by adoption, never by a blind second create.
 */
export async function createProtected(
  client: ZooKeeperClient,
  parent: string,
  name: () => { prefix: string; protectionId: string },
  data: Buffer,
  deadline: Deadline,
): Promise<Created> {
  for (;;) {
    deadline.check();
    const { prefix, protectionId } = name();
    const create = client.create(joinPath(parent, prefix), data, { mode: 'EPHEMERAL_SEQUENTIAL' });
    const list = client.getChildren(parent);
    try {
      const created = await create;
      const { children } = await list;
      const name = created.path.slice(created.path.lastIndexOf('/') + 1);
      return { path: created.path, name, stat: created.stat, children };
    } catch (error) {
      list.catch(() => undefined);
      if (!(error instanceof ZooKeeperError)) throw error;
      if (error.code === 'NONODE') {
        // The lock path is missing, or was a container the server reaped between our ensure and our create.
        await deadline.race(client.ensurePath(parent, { container: true }));
      } else if (error.code === 'CONNECTIONLOSS') {
        const adopted = await adoptAfterConnectionLoss(client, parent, protectionId, deadline);
        if (adopted) return adopted;
      } else if (error.code !== 'SESSIONEXPIRED') {
        throw error;
      }
    }
  }
}

/**
 * The create's reply was lost with the connection, but the node may exist. Never create blindly
 * again: that leaves a duplicate contender that blocks everyone behind it. Look for our
 * protection id; adopt the node only if our current session owns it, else delete it.
 */
async function adoptAfterConnectionLoss(client: ZooKeeperClient, lockPath: string, protectionId: string, deadline: Deadline): Promise<Created | undefined> {
  for (;;) {
    await deadline.race(client.waitForConnected({ timeout: Math.max(client.sessionTimeout, 1000) * 2 }));
    try {
      // The session may have moved to a server that has not seen the create yet.
      await client.sync(lockPath);
      const { children } = await client.getChildren(lockPath);
      const name = children.find((child) => child.includes(protectionId));
      if (!name) return undefined;
      const path = joinPath(lockPath, name);
      const stat = await client.exists(path);
      if (!stat) return undefined;
      if (stat.ephemeralOwner === client.sessionId) return { path, name, stat, children };
      await deleteGuaranteed(client, path, stat.ephemeralOwner);
      return undefined;
    } catch (error) {
      if (!(error instanceof ZooKeeperError)) throw error;
      if (error.code === 'NONODE' || error.code === 'SESSIONEXPIRED') return undefined;
      if (error.code !== 'CONNECTIONLOSS' && error.code !== 'TIMEOUT') throw error;
    }
  }
}

async function waitForTurn(o: QueueOptions, node: Created): Promise<void> {
  const queue = sortContenders(node.children);
  const self = queue.find((c) => c.name === node.name);
  if (!self) throw new ZooKeeperError('PROTOCOL_ERROR', 'our node is missing from a listing taken after its creation', { path: node.path });
  for (const blocker of blockers(queue, self, o.ignore)) await waitUntilGone(o, blocker, node.stat.ephemeralOwner);
}

type Outcome = 'gone' | 'again' | 'expired';

async function waitUntilGone(o: QueueOptions, blocker: Contender, owner: bigint): Promise<void> {
  const path = joinPath(o.lockPath, blocker.name);
  for (;;) {
    if (o.client.sessionId !== owner) throw new SessionLost();
    const outcome = await watchOnce(o, path);
    if (outcome === 'gone') return;
    if (outcome === 'expired') throw new SessionLost();
  }
}

/** Sets a data watch on `path` (getData, not exists: a vanished node must not leave a creation watch behind) and waits for it. */
function watchOnce(o: QueueOptions, path: string): Promise<Outcome> {
  const { client, deadline } = o;
  return new Promise<Outcome>((resolve, reject) => {
    let settled = false;
    const finish = (settle: () => void): void => {
      if (settled) return;
      settled = true;
      deadline.signal.removeEventListener('abort', onAbort);
      settle();
    };
    const watcher = (event: WatchEvent): void => {
      o.onWake?.();
      finish(() => {
        if (event.type === 'deleted') resolve('gone');
        else if (event.type === 'expired') resolve('expired');
        else if (event.type === 'closed') reject(new ZooKeeperError('CLOSED', 'client closed while waiting for the lock', { path: o.lockPath, op: 'acquire' }));
        else resolve('again');
      });
    };
    const onAbort = (): void => {
      finish(() => reject(deadline.signal.reason as LockError));
      client.removeWatcher(path, watcher).catch(() => undefined);
    };
    if (deadline.expired) return onAbort();
    deadline.signal.addEventListener('abort', onAbort, { once: true });
    client.getData(path, { watch: watcher }).then(
      () => undefined,
      async (error: unknown) => {
        if (!(error instanceof ZooKeeperError)) return finish(() => reject(error));
        if (error.code === 'NONODE') return finish(() => resolve('gone'));
        if (error.code === 'SESSIONEXPIRED') return finish(() => resolve('expired'));
        if (error.code !== 'CONNECTIONLOSS' && error.code !== 'TIMEOUT') return finish(() => reject(error));
        try {
          await deadline.race(client.waitForConnected({ timeout: Math.max(client.sessionTimeout, 1000) * 2 }));
          finish(() => resolve('again'));
        } catch (waitError) {
          finish(() => reject(waitError));
        }
      },
    );
  });
}
