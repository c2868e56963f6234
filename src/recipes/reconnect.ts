import type { ZooKeeperClient } from '../client/index.js';
import { ZooKeeperError } from '../client/index.js';
import type { Deadline } from './deadline.js';
import { onSessionEvent } from './session-events.js';

/**
 * Resolves once the client is connected again, or, given `owner`, once that session has ended
 * (then the caller's node is gone and it must start over). Without `owner` it waits for a
 * connected session, a new one after an expiry. Rejects at once when no session can come any
 * more (CLOSED, or SESSIONEXPIRED when the client does not renew expired sessions): waiting
 * would spin or hang. Otherwise only the acquire's deadline bounds the wait: a fixed bound (say
 * twice the session timeout) would fail an acquire whose own deadline allows more, for instance
 * while the client backs off between reconnect attempts.
 */
export function awaitSession(client: ZooKeeperClient, owner: bigint | undefined, deadline: Deadline): Promise<void> {
  if (client.state === 'connected' || (owner !== undefined && client.sessionId !== owner)) return Promise.resolve();
  if (client.terminated) return Promise.reject(noSession(client));
  let unsubscribe!: () => void;
  const changed = new Promise<void>((resolve, reject) => {
    unsubscribe = onSessionEvent(client, (event) => {
      if (event === 'connected' || event === 'reconnected' || (event === 'expired' && owner !== undefined)) resolve();
      else if (client.terminated) reject(noSession(client));
    });
  });
  return deadline.race(changed).finally(unsubscribe);
}

function noSession(client: ZooKeeperClient): ZooKeeperError {
  if (client.closing) return new ZooKeeperError('CLOSED', 'client closed while waiting for the lock');
  return new ZooKeeperError('SESSIONEXPIRED', 'the session expired and the client does not renew it');
}
