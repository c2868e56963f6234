import { performance } from 'node:perf_hooks';
import type { ZooKeeperClient } from '../client/index.js';

type Listener = () => void;

/** One per client with leases: the heartbeat and the one timer every lease of that client shares. */
interface Liveness {
  /** Each listener with its safety margin (ms). */
  listeners: Map<Listener, number>;
  /** The largest margin among the listeners (recomputed when the timer fires). */
  maxMargin: number;
  timer: NodeJS.Timeout | undefined;
  /** When the timer is due (performance.now() time). */
  due: number;
  /** The heartbeat, while anyone listens. */
  beat: { stop(): void } | undefined;
}

const livenesses = new WeakMap<ZooKeeperClient, Liveness>();

/**
 * Calls `listener` once when the session may have expired on the leader: `margin` ms before
 * `client.sessionAliveUntil()`, the bound the client proves with sync round trips (see
 * connection/liveness-proof.ts). Returns the unsubscribe.
 *
 * While anyone listens, the client sends one `sync` every tenth of the session timeout, so the
 * proof keeps up whichever server the client uses. Holds shorter than that cost no request. With
 * a steady heartbeat the proof trails the present by at most G + two heartbeats (under half the
 * timeout), so a lease survives a stall of about 0.45 × the timeout and is given up after it.
 */
export function onLivenessLost(client: ZooKeeperClient, margin: number, listener: Listener): () => void {
  let liveness = livenesses.get(client);
  if (!liveness) {
    liveness = { listeners: new Map(), maxMargin: 0, timer: undefined, due: Infinity, beat: undefined };
    livenesses.set(client, liveness);
  }
  const state = liveness;
  state.listeners.set(listener, margin);
  state.maxMargin = Math.max(state.maxMargin, margin);
  const due = client.sessionAliveUntil() - margin;
  if (due < state.due) arm(client, state, due);
  state.beat ??= heartbeat(client);
  return () => {
    if (!state.listeners.delete(listener) || state.listeners.size > 0) return;
    clearTimeout(state.timer);
    state.timer = undefined;
    state.due = Infinity;
    state.maxMargin = 0;
    state.beat?.stop();
    state.beat = undefined;
  };
}

function arm(client: ZooKeeperClient, state: Liveness, due: number): void {
  clearTimeout(state.timer);
  state.due = due;
  // Unref'd: the client's socket keeps the process alive while it matters.
  state.timer = setTimeout(() => check(client, state), Math.max(0, due - performance.now())).unref();
}

/** Tells every listener whose margin has been reached, then waits for the next one. */
function check(client: ZooKeeperClient, state: Liveness): void {
  state.timer = undefined;
  state.due = Infinity;
  const now = performance.now();
  const until = client.sessionAliveUntil();
  let maxMargin = 0;
  for (const [listener, margin] of [...state.listeners]) {
    if (now < until - margin) {
      maxMargin = Math.max(maxMargin, margin);
      continue;
    }
    state.listeners.delete(listener);
    listener();
  }
  state.maxMargin = maxMargin;
  if (state.listeners.size > 0) arm(client, state, until - maxMargin);
}

/**
 * Keeps the leader's knowledge of the session fresh while leases are held: a sync a tenth of the
 * session timeout after the previous one was answered (one in flight at a time), none while
 * disconnected. The first waits too, so a short hold sends nothing.
 */
function heartbeat(client: ZooKeeperClient): { stop(): void } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const next = (): void => {
    timer = setTimeout(() => {
      const beat = client.state === 'connected' ? client.sync('/').catch(() => undefined) : Promise.resolve();
      void beat.then(() => {
        if (!stopped && client.state !== 'closed') next();
      });
    }, Math.max(client.sessionTimeout / 10, 20)).unref();
  };
  next();
  return {
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
