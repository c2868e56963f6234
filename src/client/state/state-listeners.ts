import type { SessionEvent } from '../../connection/index.js';
import type { ZooKeeperError } from '../../protocol/index.js';
import { callListener } from './call-listener.js';

/** Hears every state change of a client; `reason` comes with `suspended` and `expired`, with `connecting` when the client leaves a read-only server, and with `closed` when it closed itself (AUTHFAILED). */
export type StateListener = (event: SessionEvent, reason?: ZooKeeperError) => void;

/**
 * The client's one subscription to its session's state, fanned out to any number of listeners:
 * every lease and every waiter follows the session, and a client may carry thousands of them,
 * far past the EventEmitter's leak warning at eleven.
 */
export class StateListeners {
  private readonly listeners = new Set<StateListener>();

  /** Adds `listener`; returns its unsubscribe (which may be called more than once). */
  add(listener: StateListener): () => void {
    // Wrapped: the same function added twice is two subscriptions, each with its own unsubscribe.
    const entry: StateListener = (event, reason) => listener(event, reason);
    this.listeners.add(entry);
    return () => void this.listeners.delete(entry);
  }

  dispatch(event: SessionEvent, reason?: ZooKeeperError): void {
    // Those added meanwhile hear from the next change on; those removed meanwhile hear no more.
    for (const listener of [...this.listeners]) {
      if (this.listeners.has(listener)) callListener(listener, [event, reason]);
    }
  }
}
