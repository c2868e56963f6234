import type { ZooKeeperClient } from '../client/index.js';
import { isZooKeeperError } from '../client/index.js';
import type { Deadline } from './deadline.js';

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
