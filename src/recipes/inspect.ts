import type { Stat, ZooKeeperClient } from '../client/index.js';
import { ZooKeeperError, joinPath } from '../client/index.js';
import type { Contender } from './queue/contender-name.js';
import { blockers, sortContenders } from './queue/contender-name.js';
import type { OwnerInfo } from './support/owner-data.js';
import { isDowngraded, isMarkedHeld } from './support/owner-data.js';
import { isRevocationRequest, ownerOf } from './lease/revocation.js';
import type { EachRead } from './support/read-each.js';
import { readEach } from './support/read-each.js';

export interface ContenderInfo {
  name: string;
  path: string;
  seq: number;
  /** A downgraded writer is `shared`: it holds a read lock now (zklock's readers share it; Curator's and kazoo's still wait for it). */
  kind: Contender['kind'];
  /** Set on a write node whose holder downgraded to a read lock (ReadWriteLock.downgrade). */
  downgraded?: true;
  /**
   * Who created the node, from its data. After a revocation request by Curator (whose protocol
   * writes over it) the owner is unknown: `{ id: REVOKED_OWNER }` ('(revocation requested)');
   * zklock's requestRevocation keeps it.
   */
  owner: OwnerInfo | { id: string };
  /**
   * Its data is not ours to read (NOAUTH: its ACL gives us no READ): it holds or waits all the
   * same, its owner is `{ id: UNREADABLE_OWNER }`, and a downgrade of it cannot be seen.
   */
  unreadable?: true;
  /** Someone asked this contender to let go (requestRevocation, `zklock revoke`, Curator's Revoker). */
  revocationRequested?: true;
  /** The owning session. */
  sessionId: bigint;
  /** When it joined the queue (its node's ctime, the server's clock): a waiter waits, and a holder held at most, since then. */
  createdAt: Date;
  /**
   * Holders only: a time by which the hold had begun (the server's clock), so it has held at least
   * since then; `heldSinceExact` when it began then. From what the server records: a lease node
   * (a semaphore's, a simple lock's) is made as the hold begins; a queue's holder holds from its
   * node's creation when the queue has not changed since, else no later than the queue's last
   * change that a present node's ctime dates, or than its own mark of having acquired (OwnerInfo.held).
   * Undefined when nothing dates it: it held for at most `now - createdAt`, perhaps much less.
   */
  heldSince?: Date;
  heldSinceExact?: true;
  /** The contender's fencing token (its node's czxid). */
  fencingToken: bigint;
}

export interface LockState {
  lockPath: string;
  /** A semaphore's contenders are in its `leases/` and `locks/` children; any other lock's are its own children. */
  kind: 'queue' | 'semaphore';
  /** Who holds the lock now, in queue order (several for readers or a semaphore). */
  holders: ContenderInfo[];
  /** Who waits, in the order they will get it. */
  waiters: ContenderInfo[];
}

/**
 * Holders and waiters of a lock path, for mutexes and read/write locks (zklock, Curator or
 * kazoo names) and for semaphores: Curator's and zklock's (`leases/` and `locks/` children) and
 * kazoo's (lease nodes of 32 hex digits as children, waiters in the kazoo lock `<path>-__lock__`
 * beside it). Unknown children are left out. `kind` reads the path as that kind of lock. Without
 * it, a path with a `leases` or `locks` child, or only kazoo lease children, is read as a semaphore: one that also holds other locks in a folder named `locks` (`/`, say)
 * is not one, and the caller that knows (a lock object, the CLI by its evidence) says so.
 */
export async function inspectLock(client: ZooKeeperClient, lockPath: string, options: { kind?: LockState['kind'] } = {}): Promise<LockState> {
  const { children, stat } = await client.getChildren(lockPath);
  const curator = children.includes('leases') || children.includes('locks');
  if ((options.kind ?? (curator || isKazooLeases(children) ? 'semaphore' : 'queue')) === 'semaphore') {
    // kazoo's leases are the path's own children; its waiters queue in a kazoo Lock beside it.
    const [holders, queue] = curator
      ? await Promise.all([describeQueue(client, joinPath(lockPath, 'leases'), true), describeQueue(client, joinPath(lockPath, 'locks'), false)])
      : await Promise.all([describeKazooLeases(client, lockPath, children), describeQueue(client, kazooSemaphoreLock(lockPath), false)]);
    // A lease node is made as its hold begins.
    return { lockPath, kind: 'semaphore', holders: holders.all.map(heldFromCreation), waiters: queue.all };
  }
  const { all, holding, marked } = await describeQueue(client, lockPath, false, children);
  return { lockPath, kind: 'queue', holders: all.filter((c) => holding.has(c.name)).map((c) => queueHoldSince(c, all, stat.pzxid, marked.get(c.name))), waiters: all.filter((c) => !holding.has(c.name)) };
}

function heldFromCreation(c: ContenderInfo): ContenderInfo {
  return { ...c, heldSince: c.createdAt, heldSinceExact: true };
}

/**
 * When a queue's holder began to hold, as far as the server tells (see ContenderInfo.heldSince).
 * The hold began with a change of the queue: the holder's own creation, or the deletion of the
 * last node ahead of it. So it began no later than the queue's last change (the lock path's
 * pzxid), which is datable when it made a node still there (its ctime); when that node is the
 * holder's own, nothing changed since it queued: it has held since then. `markedAt` is the
 * holder's own mark of having acquired (its node's mtime, when its data says held).
 */
function queueHoldSince(c: ContenderInfo, all: readonly ContenderInfo[], pzxid: bigint, markedAt: Date | undefined): ContenderInfo {
  if (pzxid === c.fencingToken) return heldFromCreation(c);
  const lastChange = all.find((o) => o.fencingToken === pzxid)?.createdAt;
  const bounds = [lastChange, markedAt].filter((d): d is Date => d !== undefined);
  return bounds.length === 0 ? c : { ...c, heldSince: new Date(Math.min(...bounds.map((d) => d.getTime()))) };
}

async function describeQueue(
  client: ZooKeeperClient,
  parent: string,
  leases: boolean,
  known?: string[],
): Promise<{ all: ContenderInfo[]; holding: Set<string>; marked: Map<string, Date> }> {
  let names = known;
  if (!names) {
    try {
      names = (await client.getChildren(parent)).children;
    } catch (error) {
      if (error instanceof ZooKeeperError && error.code === 'NONODE') return { all: [], holding: new Set(), marked: new Map() };
      throw error;
    }
  }
  const queue = leases ? leaseOrder(names) : sortContenders(names);
  if (queue.length === 0) return { all: [], holding: new Set(), marked: new Map() };
  const reads = await readEach(
    client,
    queue.map((c) => joinPath(parent, c.name)),
  );
  // A node we may not read is still there, holding or waiting: exists needs no permission, and
  // its stat is all the queue order needs (a lock of unreadable contenders is not an empty one).
  const seen = await Promise.all(
    queue.map(async (contender, i) => {
      const path = joinPath(parent, contender.name);
      const read = await readOf(client, path, reads[i]);
      return read && { contender, read, info: describe(path, contender, read) };
    }),
  );
  const all: ContenderInfo[] = [];
  const holding = new Set<string>();
  const marked = new Map<string, Date>();
  for (const entry of seen) {
    if (!entry) continue;
    all.push(entry.info);
    // The holder's own mark of having acquired dates its hold by the node's mtime (see OwnerInfo.held).
    if (entry.read.data !== null && isMarkedHeld(entry.read.data)) marked.set(entry.contender.name, new Date(entry.read.stat.mtime));
  }
  // Nodes that went between the listing and the reads block nobody. A downgraded writer is a
  // reader here: it no longer blocks readers, and still blocks the writers behind it.
  const present = all.map((c): Contender => ({ name: c.name, seq: c.seq, kind: c.kind }));
  for (const contender of present) {
    if (blockers(present, contender).length === 0) holding.add(contender.name);
  }
  return { all, holding, marked };
}

/** What inspection and the CLI show as the owner of a node whose data we may not read. */
export const UNREADABLE_OWNER = '(unreadable: no READ permission)';

/** A contender node as read (`data` null: refused, see ContenderInfo.unreadable): a downgraded writer is a reader (see ContenderInfo.kind). */
function describe(path: string, contender: Pick<Contender, 'name' | 'seq' | 'kind'>, read: { data: Buffer | null; stat: Stat }): ContenderInfo {
  const { data } = read;
  const downgraded = data !== null && isDowngraded(data);
  const revoking = data !== null && isRevocationRequest(data);
  return {
    name: contender.name,
    path,
    seq: contender.seq,
    kind: downgraded ? 'shared' : contender.kind,
    ...(downgraded ? { downgraded: true as const } : {}),
    ...(data === null ? { unreadable: true as const } : {}),
    owner: data === null ? { id: UNREADABLE_OWNER } : ownerOf(data),
    ...(revoking ? { revocationRequested: true as const } : {}),
    sessionId: read.stat.ephemeralOwner,
    createdAt: new Date(read.stat.ctime),
    fencingToken: read.stat.czxid,
  };
}

/** A kazoo semaphore's lease node: `uuid4().hex`, no sequence (kazoo.recipe.lock.Semaphore.create_path). */
export const KAZOO_LEASE_NAME = /^[0-9a-f]{32}$/;

/** A kazoo semaphore's children: its leases, nothing else (and at least one: an empty path tells nothing). */
export function isKazooLeases(children: readonly string[]): boolean {
  return children.length > 0 && children.every((c) => KAZOO_LEASE_NAME.test(c));
}

/** The kazoo Lock beside a kazoo semaphore in which its waiters queue (kazoo's Semaphore.lock_path). */
export function kazooSemaphoreLock(semaphorePath: string): string {
  return `${semaphorePath}-__lock__`;
}

/** A kazoo semaphore's lease holders, oldest first (their names carry no sequence: their czxid orders them). */
async function describeKazooLeases(client: ZooKeeperClient, path: string, children: readonly string[]): Promise<{ all: ContenderInfo[] }> {
  const names = children.filter((c) => KAZOO_LEASE_NAME.test(c));
  if (names.length === 0) return { all: [] };
  const reads = await readEach(
    client,
    names.map((name) => joinPath(path, name)),
  );
  const seen = await Promise.all(
    names.map(async (name, i) => {
      const leasePath = joinPath(path, name);
      const read = await readOf(client, leasePath, reads[i]);
      return read && describe(leasePath, { name, seq: 0, kind: 'shared' }, read);
    }),
  );
  const all = seen.filter((c): c is ContenderInfo => c !== null);
  return { all: all.sort((a, b) => (a.fencingToken < b.fencingToken ? -1 : a.fencingToken > b.fencingToken ? 1 : 0)) };
}

/** What a lock object's `participants()` answers: inspectLock, where a lock path not made yet (or reaped) has nobody, of the object's own `kind`. */
export async function participantsOf(client: ZooKeeperClient, lockPath: string, kind: LockState['kind']): Promise<LockState> {
  try {
    return await inspectLock(client, lockPath, { kind });
  } catch (error) {
    if (error instanceof ZooKeeperError && error.code === 'NONODE') return { lockPath, kind, holders: [], waiters: [] };
    throw error;
  }
}

/** The holders of a semaphore's leases, in creation order (a lease's `seq` is its node's). */
export async function leaseHoldersOf(client: ZooKeeperClient, semaphorePath: string): Promise<ContenderInfo[]> {
  return (await describeQueue(client, joinPath(semaphorePath, 'leases'), true)).all;
}

/**
 * A semaphore in kazoo's layout: its lease holders are every child of `path` (kazoo's named by a
 * uuid, zklock's `_c_<uuid>-lease-<seq>`), in creation order; its waiters, the contenders of the
 * kazoo lock at `<path>-__lock__`, in queue order (its holder first: the head, counting leases).
 */
export async function kazooSemaphoreOf(client: ZooKeeperClient, path: string): Promise<LockState> {
  const [holders, queue] = await Promise.all([kazooLeaseHolders(client, path), participantsOf(client, `${path}-__lock__`, 'queue')]);
  return { lockPath: path, kind: 'semaphore', holders, waiters: [...queue.holders, ...queue.waiters] };
}

/** See kazooSemaphoreOf. */
export async function kazooLeaseHolders(client: ZooKeeperClient, path: string): Promise<ContenderInfo[]> {
  let names: string[];
  try {
    names = (await client.getChildren(path)).children;
  } catch (error) {
    if (error instanceof ZooKeeperError && error.code === 'NONODE') return [];
    throw error;
  }
  if (names.length === 0) return [];
  const reads = await client.multiRead(names.map((name) => ({ type: 'getData' as const, path: joinPath(path, name) })));
  const holders: ContenderInfo[] = [];
  names.forEach((name, i) => {
    const read = reads[i];
    if (!read || read instanceof ZooKeeperError || read.op !== 'getData') return;
    const seq = LEASE_NAME.exec(name)?.[1];
    holders.push(describe(joinPath(path, name), { name, seq: seq === undefined ? 0 : Number(seq), kind: 'shared' }, read));
  });
  return holders.sort((a, b) => (a.fencingToken < b.fencingToken ? -1 : a.fencingToken > b.fencingToken ? 1 : 0));
}

/**
 * A simple lock's holder: the node at its path, if any. Its waiters leave no node (they watch
 * the path), so none can be listed; the node has no sequence: its `seq` is 0.
 */
export async function simpleLockState(client: ZooKeeperClient, path: string): Promise<LockState> {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const [result] = await readEach(client, [path]);
  const read = await readOf(client, path, result);
  return { lockPath: path, kind: 'queue', holders: read ? [heldFromCreation(describe(path, { name, seq: 0, kind: 'exclusive' }, read))] : [], waiters: [] };
}

/**
 * A node's data and stat from its readEach result; null when it is gone. A read refused with
 * NOAUTH gives the stat alone (exists needs no permission; see ContenderInfo.unreadable).
 */
async function readOf(client: ZooKeeperClient, path: string, result: EachRead | undefined): Promise<{ data: Buffer | null; stat: Stat } | null> {
  if (result === undefined) return null;
  if (!(result instanceof ZooKeeperError)) return result;
  if (result.code === 'NONODE') return null;
  if (result.code !== 'NOAUTH') throw result;
  const stat = await client.exists(path);
  return stat && { data: null, stat };
}

/** A semaphore lease node's name (`_c_<uuid>-lease-<seq>`), its sequence captured. */
export const LEASE_NAME = /-lease-(\d{10}|-\d{9,10})$/;

/** Semaphore lease nodes, in creation order. */
function leaseOrder(names: string[]): Contender[] {
  const leases: Contender[] = [];
  for (const name of names) {
    const match = LEASE_NAME.exec(name);
    if (match) leases.push({ name, seq: Number(match[1]), kind: 'shared' });
  }
  return leases.sort((a, b) => (a.seq - b.seq) | 0);
}
