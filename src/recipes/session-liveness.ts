import { performance } from 'node:perf_hooks';
import type { ZooKeeperClient } from '../client/index.js';
import type { Deadline } from './deadline.js';
import { onSessionEvent } from './session-events.js';

type Listener = () => void;

/** One per client used by the recipes: the heartbeat, and the one timer every lease of that client shares. */
interface Liveness {
  /** Each listener with its safety margin (ms). */
  listeners: Map<Listener, number>;
  timer: NodeJS.Timeout | undefined;
  /** When the timer is due (performance.now() time). */
  due: number;
}

const livenesses = new WeakMap<ZooKeeperClient, Liveness>();

/**
 * Every lease depends on `client.sessionAliveUntil()`, the bound the client proves with sync round
 * trips (see connection/liveness-proof.ts). From the first lock a client takes until it closes,
 * it sends one `sync` every tenth of the session timeout (one in flight at a time), whether or
 * not a lease is held at that moment: a proof takes about a quarter of the timeout to build, so
 * it must already stand when the next lease begins. With the heartbeat going the proof trails the
 * present by at most G + two heartbeats (under half the timeout), so a lease survives a stall of
 * about 0.45 × the timeout and is given up after it.
 */
function livenessOf(client: ZooKeeperClient): Liveness {
  let liveness = livenesses.get(client);
  if (!liveness) {
    liveness = { listeners: new Map(), timer: undefined, due: Infinity };
    livenesses.set(client, liveness);
    heartbeat(client);
  }
  return liveness;
}

/**
 * Calls `listener` once when the session may have expired on the leader: `margin` ms before
 * `client.sessionAliveUntil()`. Returns the unsubscribe.
 */
export function onLivenessLost(client: ZooKeeperClient, margin: number, listener: Listener): () => void {
  const state = livenessOf(client);
  state.listeners.set(listener, margin);
  const due = client.sessionAliveUntil() - margin;
  if (due < state.due) arm(client, state, due);
  return () => {
    if (!state.listeners.delete(listener) || state.listeners.size > 0) return;
    clearTimeout(state.timer);
    state.timer = undefined;
    state.due = Infinity;
  };
}

/**
 * Before a lease is handed out: makes sure the proof reaches past the safety margin, so that a
 * new lease is never born lost. It already does while the heartbeat runs; on a client's first
 * lock (or after a long stall) two syncs in a row build it: the first covers the newest packet
 * answered at least G before it, the second chains the first. Never throws, bounded by the
 * deadline: a proof that cannot be had shows as the lease's signal aborting at once.
 */
export async function proveFresh(client: ZooKeeperClient, margin: number, deadline: Deadline): Promise<void> {
  livenessOf(client);
  for (let round = 0; round < 2 && client.sessionAliveUntil() - margin <= performance.now(); round++) {
    try {
      await client.sync('/', { signal: deadline.requestSignal });
    } catch {
      return;
    }
  }
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
  if (state.listeners.size > 0) arm(client, state, until - maxMargin);
}

/** A sync a tenth of the session timeout after the previous one was answered; none while disconnected; none after close. */
function heartbeat(client: ZooKeeperClient): void {
  let timer: NodeJS.Timeout | undefined;
  const unsubscribe = onSessionEvent(client, (event) => {
    if (event === 'closed' || client.terminated) stop();
  });
  const stop = (): void => {
    clearTimeout(timer);
    timer = undefined;
    unsubscribe();
  };
  const beat = (): void => {
    const sent = client.state === 'connected' ? client.sync('/').catch(() => undefined) : Promise.resolve();
    void sent.then(() => {
      if (client.terminated) stop();
      else timer = setTimeout(beat, Math.max(client.sessionTimeout / 10, 20)).unref();
    });
  };
  beat();
}
