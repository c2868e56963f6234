import type { WatchEvent, ZooKeeperClient } from '../../client/index.js';
import { ZooKeeperError, joinPath } from '../../client/index.js';
import type { Contender, ContenderKind } from './contender-name.js';
import type { Deadline } from '../support/deadline.js';
import type { LockError } from '../support/lock-error.js';
import { isDowngraded } from '../support/owner-data.js';
import type { EachRead } from '../support/read-each.js';
import { readEach } from '../support/read-each.js';
import { awaitSession } from '../support/reconnect.js';
import { isTransient } from '../support/transient.js';

/** What a waiter in a queue needs to watch and read the contenders ahead of it. */
export interface QueueWait {
  client: ZooKeeperClient;
  lockPath: string;
  kind: ContenderKind;
  deadline: Deadline;
}

/** The session our node belonged to has ended: the node is gone with it. */
export class SessionLost extends Error {}

type Outcome = 'gone' | 'again' | 'expired';

/**
 * Resolves when `blocker` is gone, with its data as last read (none when it was gone before we
 * looked). `stop` (default: the deadline's signal) ends the wait early, its watch removed.
 */
export async function waitUntilGone(o: QueueWait, blocker: Contender, owner: bigint, stop = o.deadline.signal): Promise<Buffer | undefined> {
  const path = joinPath(o.lockPath, blocker.name);
  const seen: { data?: Buffer } = {};
  for (;;) {
    if (o.client.sessionId !== owner) throw new SessionLost();
    const outcome = await watchOnce(o, path, owner, seen, stop);
    if (outcome === 'gone') return seen.data;
    if (outcome === 'expired') throw new SessionLost();
  }
}

/** Past this many candidates one listing is cheaper for the server than reading each of them. */
export const LIST_INSTEAD_OF_READ = 16;

/**
 * The plain check: which of `candidates` (contenders that were ahead of us) still block us,
 * nearest first. Nodes ahead of us only ever go, so a node gone (NONODE) is out for good, and so
 * is, for a reader, a writer that downgraded (the marker in its data). One round trip reads
 * their data (readEach: a multiRead, or pipelined reads on ZooKeeper 3.5); past
 * LIST_INSTEAD_OF_READ of them, one listing first, which is all a writer needs (anyone still
 * ahead blocks it) and all a reader gets while many writers are left (watching the nearest one
 * then finds the marker, see watchOnce).
 */
export async function presentBlockers(o: QueueWait, candidates: Contender[]): Promise<Contender[]> {
  let left = candidates;
  if (left.length > LIST_INSTEAD_OF_READ) {
    const present = new Set((await o.client.getChildren(o.lockPath, { signal: o.deadline.requestSignal })).children);
    left = left.filter((c) => present.has(c.name));
    if (o.kind === 'exclusive' || left.length > LIST_INSTEAD_OF_READ) return left;
  }
  if (left.length === 0) return left;
  const reads = await readEach(
    o.client,
    left.map((c) => joinPath(o.lockPath, c.name)),
    { signal: o.deadline.requestSignal },
  );
  return left.filter((_, i) => stillBlocks(o, reads[i]));
}

function stillBlocks(o: QueueWait, read: EachRead | undefined): boolean {
  if (read instanceof ZooKeeperError) return read.code !== 'NONODE';
  // A downgraded writer holds a read lock: it no longer blocks readers.
  return !(o.kind === 'shared' && read !== undefined && isDowngraded(read.data));
}

/**
 * Runs `attempt` (reads about the queue) until it answers: again once reconnected after a
 * connection loss (bounded by the deadline); SessionLost when our session, and our node with it,
 * has ended.
 */
export async function untilAnswered<T>(o: QueueWait, owner: bigint, attempt: () => Promise<T>): Promise<T> {
  for (;;) {
    if (o.client.sessionId !== owner) throw new SessionLost();
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof ZooKeeperError)) throw error;
      if (error.code === 'SESSIONEXPIRED') throw new SessionLost();
      if (!isTransient(error)) throw error;
      await awaitSession(o.client, owner, o.deadline);
    }
  }
}

/**
 * Sets a data watch on `path` (getData, not exists: a vanished node must not leave a creation
 * watch behind) and waits for it; the data read goes into `seen`. When `stop` aborts first the
 * watch is removed and the wait rejects with the signal's reason.
 */
function watchOnce(o: QueueWait, path: string, owner: bigint, seen: { data?: Buffer }, stop: AbortSignal): Promise<Outcome> {
  const { client, deadline } = o;
  return new Promise<Outcome>((resolve, reject) => {
    let settled = false;
    const finish = (settle: () => void): void => {
      if (settled) return;
      settled = true;
      stop.removeEventListener('abort', onAbort);
      settle();
    };
    const watcher = (event: WatchEvent): void => {
      finish(() => {
        if (event.type === 'deleted') resolve('gone');
        else if (event.type === 'expired') resolve('expired');
        else if (event.type === 'closed') reject(new ZooKeeperError('CLOSED', 'client closed while waiting for the lock', { path: o.lockPath, op: 'acquire' }));
        else resolve('again');
      });
    };
    const onAbort = (): void => {
      finish(() => reject(stop.reason as LockError));
      client.removeWatcher(path, watcher).catch(() => undefined);
    };
    if (stop.aborted) return onAbort();
    stop.addEventListener('abort', onAbort, { once: true });
    client.getData(path, { watch: watcher }).then(
      ({ data }) => {
        seen.data = data;
        // A downgraded writer holds a read lock: it no longer blocks readers.
        if (o.kind === 'shared' && isDowngraded(data)) {
          finish(() => resolve('gone'));
          client.removeWatcher(path, watcher).catch(() => undefined);
        }
      },
      async (error: unknown) => {
        if (!(error instanceof ZooKeeperError)) return finish(() => reject(error));
        if (error.code === 'NONODE') return finish(() => resolve('gone'));
        if (error.code === 'SESSIONEXPIRED') return finish(() => resolve('expired'));
        if (!isTransient(error)) return finish(() => reject(error));
        try {
          // 'again' re-checks the session first: an expiry meanwhile means our node is gone.
          await awaitSession(client, owner, deadline);
          finish(() => resolve('again'));
        } catch (waitError) {
          finish(() => reject(waitError));
        }
      },
    );
  });
}
