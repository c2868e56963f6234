import type { SessionEvent, ZooKeeperClient } from '../client/index.js';

type Listener = (event: SessionEvent) => void;

interface Fanout {
  listeners: Set<Listener>;
  dispatch: Listener;
}

const fanouts = new WeakMap<ZooKeeperClient, Fanout>();

/**
 * Subscribes to a client's session events; returns the unsubscribe. Every lease and every waiter
 * follows the session, and a client may carry thousands of them: they share one 'state' listener
 * per client (attached while anyone listens) instead of tripping the EventEmitter leak warning
 * at eleven.
 */
export function onSessionEvent(client: ZooKeeperClient, listener: Listener): () => void {
  let fanout = fanouts.get(client);
  if (!fanout) {
    const listeners = new Set<Listener>();
    fanout = {
      listeners,
      dispatch: (event) => {
        for (const each of [...listeners]) each(event);
      },
    };
    fanouts.set(client, fanout);
  }
  const { listeners, dispatch } = fanout;
  // Checked rather than assumed: the caller may have removed every listener of the client.
  if (!client.listeners('state').includes(dispatch)) client.on('state', dispatch);
  listeners.add(listener);
  return () => {
    if (listeners.delete(listener) && listeners.size === 0) client.off('state', dispatch);
  };
}

/** Resolves once the client is connected again or its session has ended (expired, closed), or after twice the session timeout, by which the session is certainly gone. */
export function waitForSessionOrEnd(client: ZooKeeperClient): Promise<void> {
  if (client.state === 'connected' || client.state === 'closed') return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      unsubscribe();
      resolve();
    };
    const unsubscribe = onSessionEvent(client, (event) => {
      if (event === 'connected' || event === 'reconnected' || event === 'expired' || event === 'closed') done();
    });
    const timer = setTimeout(done, Math.max(client.sessionTimeout, 1000) * 2);
  });
}
