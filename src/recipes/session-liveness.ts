import { performance } from 'node:perf_hooks';
import type { ZooKeeperClient } from '../client/index.js';
import { ZooKeeperError } from '../client/index.js';
import type { Deadline } from './deadline.js';
import type { LockAcl } from './lock-acl.js';
import { nodeAcl } from './lock-acl.js';
import { awaitSession } from './reconnect.js';
import { isTransient } from './transient.js';

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
 * present by at most G + three heartbeats and a few round trips (about 0.55 × the timeout), so
 * with the default margin a lease survives a stall of about a third of the timeout and is given
 * up after it.
 */
function livenessOf(client: ZooKeeperClient): Liveness {
  let liveness = livenesses.get(client);
  if (!liveness) {
    liveness = { listeners: new Map(), timer: undefined, due: Infinity };
    livenesses.set(client, liveness);
    heartbeat(client, liveness);
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
 * Before a lease on `node` is handed out: makes sure the proof reaches past the safety margin,
 * so that a lease is not born lost. It already does while the heartbeat runs; on a client's
 * first lock (or after a stall) a sync covers the newest packet answered at least G before it,
 * and a write sent after its answer chains it: setACL of our own node to the ACL the recipes
 * create it with (`acl`, see lock-acl.ts), which changes nothing but its ACL version (so the
 * creator needs ADMIN on its node, as CREATOR_ALL gives; syncs cannot chain a proof that has
 * lapsed: see liveness-proof.ts). Bounded by the deadline: rejects with its LockError once it has
 * passed (the caller then gives its node up: nobody will hold it), with NOAUTH when the setACL is
 * refused. A lost connection is ridden out on the same session. Otherwise never throws: a proof
 * that cannot be had shows as the lease's signal aborting at once.
 */
export async function proveFresh(client: ZooKeeperClient, margin: number, deadline: Deadline, node: string, acl: LockAcl | undefined): Promise<void> {
  livenessOf(client);
  if (client.sessionAliveUntil() - margin > performance.now()) return;
  const session = client.sessionId;
  for (;;) {
    try {
      await client.sync('/', { signal: deadline.requestSignal });
      await client.setACL(node, nodeAcl(client, acl, node), { signal: deadline.requestSignal });
      return;
    } catch (error) {
      // Aborted by the deadline: the acquire is over.
      deadline.check();
      // Refused: the node's ACL gives its creator no ADMIN, so no lease on it could ever be proven
      // fresh this way; the caller gives the node up and rejects with the server's NOAUTH.
      if (error instanceof ZooKeeperError && error.code === 'NOAUTH') throw error;
      // Anything else but a lost connection or an unanswered request: the lease's monitor decides.
      if (!isTransient(error)) return;
    }
    // The session may well live on (a reconnect keeps it): prove it again on the next connection,
    // not hand out a lease already lost. Each try waits for a connection; the session's end, the
    // client's and the deadline end the tries (the monitor then decides, or the acquire is over).
    await awaitSession(client, session, deadline).catch(() => deadline.check());
    if (client.sessionId !== session || client.state !== 'connected') return;
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

/**
 * A sync a tenth of the session timeout after the previous one was answered; none while
 * disconnected; none after close. Also re-checks the leases' timer after every handshake.
 */
function heartbeat(client: ZooKeeperClient, state: Liveness): void {
  let timer: NodeJS.Timeout | undefined;
  const unsubscribe = client.onState((event) => {
    if (event === 'closed' || client.terminated) stop();
    // A reconnect may have negotiated a shorter timeout: the shared timer is due sooner.
    else if ((event === 'connected' || event === 'reconnected') && state.listeners.size > 0) check(client, state);
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
