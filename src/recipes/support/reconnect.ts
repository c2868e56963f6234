import type { AclProvider, ZooKeeperClient } from '../../client/index.js';
import { isZooKeeperError } from '../../client/index.js';
import type { Deadline } from './deadline.js';
import { isTransient } from './transient.js';

/**
 * Resolves once the client is connected again, or, given `owner`, once that session has ended
 * (then the caller's node is gone and it must start over). Without `owner` it waits for a
 * connected session, a new one after an expiry. Rejects at once when no session can come any
 * more (CLOSED, or SESSIONEXPIRED when the client does not renew expired sessions): waiting
 * would spin or hang. Otherwise only the acquire's deadline bounds the wait: a fixed bound (say
 * twice the session timeout) would fail an acquire whose own deadline allows more, for instance
 * while the client backs off between reconnect attempts.
 */
export async function awaitSession(client: ZooKeeperClient, owner: bigint | undefined, deadline: Deadline): Promise<void> {
  try {
    await client.waitForConnected({ session: owner, signal: deadline.requestSignal, timeout: Infinity });
  } catch (error) {
    // Aborted by the deadline: reject with the deadline's own LockError.
    if (isZooKeeperError(error, 'ABORTED')) deadline.check();
    throw error;
  }
}

/**
 * The session a create sent right now runs on, once the client has one. A request sent while it
 * has none (between an expiry and the next session, while it waits to renew) is queued and runs
 * on the next session, whose id nobody knows when it is sent: such a create's node could not be
 * told from the expired session's, nor found and deleted when its reply is lost or the acquire
 * gives up while it is in flight, and would stay for the new session's life. One sent while the
 * client has session S runs on S or fails: an expiry fails every request queued or in flight.
 * Bounded by the deadline, and rejects as awaitSession does when no session can come. The
 * caller sends its create in the same synchronous step as it reads the answer (a session changes
 * only in I/O and timer callbacks, never between an await's resolution and its continuation).
 */
export async function sessionForCreate(client: ZooKeeperClient, deadline: Deadline): Promise<bigint> {
  while (client.sessionId === 0n) await awaitSession(client, undefined, deadline);
  return client.sessionId;
}

/**
 * Creates a missing lock path (or a semaphore's folder) for an acquire whose create was refused
 * NONODE. A lost connection or an unanswered request is ridden out like the rest of the acquire's
 * steps (CONNECTIONLOSS is never an acquire's outcome): each retry waits for a connected session,
 * and the deadline bounds them all. The session's end returns too: the caller creates again on
 * the next session (or fails when it must keep its session), where a NONODE brings it back here.
 */
export async function ensureLockPath(client: ZooKeeperClient, path: string, options: { container: boolean; acl: AclProvider | undefined }, deadline: Deadline): Promise<void> {
  for (;;) {
    try {
      await deadline.race(client.ensurePath(path, { ...options, signal: deadline.requestSignal }));
      return;
    } catch (error) {
      if (isZooKeeperError(error, 'SESSIONEXPIRED')) return;
      if (!isTransient(error)) throw error;
    }
    await awaitSession(client, undefined, deadline);
  }
}
