import type { SessionEvent, ZooKeeperClient } from '../client/index.js';

type Listener = (event: SessionEvent) => void;

const listeners = new WeakMap<ZooKeeperClient, Set<Listener>>();

/**
 * Subscribes to a client's session events; returns the unsubscribe. Every lease and every waiter
 * follows the session, and a client may carry thousands of them: they share one 'state' listener
 * per client instead of tripping the EventEmitter leak warning at eleven.
 */
export function onSessionEvent(client: ZooKeeperClient, listener: Listener): () => void {
  let set = listeners.get(client);
  if (!set) {
    const created = new Set<Listener>();
    client.on('state', (event: SessionEvent) => {
      for (const each of [...created]) each(event);
    });
    listeners.set(client, created);
    set = created;
  }
  set.add(listener);
  const subscribed = set;
  return () => subscribed.delete(listener);
}
