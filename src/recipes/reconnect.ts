import type { ZooKeeperClient } from '../client/index.js';
import { ZooKeeperError } from '../client/index.js';
import type { Deadline } from './deadline.js';
import { onSessionEvent } from './session-events.js';

/**
 * Resolves once the client is connected again, or once session `owner` has ended (then the
 * caller's node is gone and it must start over). Only the acquire's deadline bounds the wait: a
 * fixed bound (say twice the session timeout) would fail an acquire whose own deadline allows
 * more, for instance while the client backs off between reconnect attempts. Rejects with CLOSED.
 */
export function awaitSession(client: ZooKeeperClient, owner: bigint, deadline: Deadline): Promise<void> {
  if (client.state === 'connected' || client.sessionId !== owner) return Promise.resolve();
  if (client.state === 'closed') return Promise.reject(new ZooKeeperError('CLOSED', 'client is closed'));
  let unsubscribe!: () => void;
  const changed = new Promise<void>((resolve, reject) => {
    unsubscribe = onSessionEvent(client, (event) => {
      if (event === 'closed') reject(new ZooKeeperError('CLOSED', 'client closed while waiting for the lock'));
      else if (event === 'connected' || event === 'reconnected' || event === 'expired') resolve();
    });
  });
  return deadline.race(changed).finally(unsubscribe);
}
