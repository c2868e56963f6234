import { performance } from 'node:perf_hooks';
import type { SessionEvent, ZooKeeperClient } from '../../client/index.js';
import { callListener } from '../../client/state/call-listener.js';
import { ZooKeeperError } from '../../client/index.js';
import type { Deadline } from '../support/deadline.js';
import type { LockAcl } from '../support/lock-acl.js';
import { LockError, LockLostError } from '../support/lock-error.js';
import { nodeAcl } from '../support/lock-acl.js';
import { awaitSession } from '../support/reconnect.js';
import { timerAt } from '../support/timer-at.js';
import { isTransient } from '../support/transient.js';

/**
 * A lease's monitor as its client reaches it: an entry in one set per client, rather than a
 * state listener and a liveness listener of its own (two closures, their unsubscribes, and an
 * entry in each of two sets, for every lease held).
 */
export interface SessionFollower {
  /** The safety margin (ms): `livenessLost` is called this long before `client.sessionAliveUntil()`. */
  readonly margin: number;
  /** The session may have expired on the leader; called once, and the follower is dropped. */
  livenessLost(): void;
  /** Every state change of the client while it follows. */
  sessionEvent(event: SessionEvent): void;
}

/** One per client used by the recipes: the heartbeat, the one state listener and the one timer every lease of that client shares. */
interface Liveness {
  followers: Set<SessionFollower>;
  timer: NodeJS.Timeout | undefined;
  /** When the timer is due (performance.now() time). */
  due: number;
}

const livenesses = new WeakMap<ZooKeeperClient, Liveness>();

/**
 * Every lease depends on `client.sessionAliveUntil()`, the bound the client proves with sync round
 * trips (see connection/session/liveness-proof.ts). From the first lock a client takes until it closes,
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
    liveness = { followers: new Set(), timer: undefined, due: Infinity };
    livenesses.set(client, liveness);
    heartbeat(client, liveness);
  }
  return liveness;
}

/**
 * From now on `follower` hears the client's state changes, and once (then it is dropped) that the
 * session may have expired on the leader: `follower.margin` ms before `client.sessionAliveUntil()`.
 */
export function follow(client: ZooKeeperClient, follower: SessionFollower): void {
  const state = livenessOf(client);
  state.followers.add(follower);
  const due = client.sessionAliveUntil() - follower.margin;
  if (due < state.due) arm(client, state, due);
}

/** `follower` hears nothing more (see follow); the timer stops with the last one. */
export function unfollow(client: ZooKeeperClient, follower: SessionFollower): void {
  const state = livenesses.get(client);
  if (!state?.followers.delete(follower) || state.followers.size > 0) return;
  clearTimeout(state.timer);
  state.timer = undefined;
  state.due = Infinity;
}

/**
 * Rounds of proof tried before giving up on one that answers yet still falls short: one more than
 * a stall between the sync and the write needs (each round after the first can carry the one
 * before it, see proveFresh); more would only wait longer for a margin that no proof can clear
 * (one past about three quarters of the timeout, see liveness-proof.ts).
 */
const PROOF_ROUNDS = 3;

/**
 * Before a lease on `node` is handed out: makes sure the proof reaches past the safety margin,
 * so that a lease is not born lost. It already does while the heartbeat runs; on a client's
 * first lock (or after a stall) a sync covers the newest packet answered at least G before it,
 * and a write sent after its answer chains it: setACL of our own node to the ACL the recipes
 * create it with (`acl`, see lock-acl.ts), which changes nothing but its ACL version (so the
 * creator needs ADMIN on its node, as CREATOR_ALL gives; syncs cannot chain a proof that has
 * lapsed: see liveness-proof.ts). A round can end with the proof still short: a stall between
 * the sync and the write, a connection lost (then waited out on the same session, within the
 * deadline). It is tried again, up to PROOF_ROUNDS, each round once the last one's sync answer is
 * old enough for a sync to carry it. Rejects (the caller then gives its node up:
 * nobody will hold it) with the deadline's LockError once it has passed, with NOAUTH when the
 * setACL is refused, with the session's end (SESSIONEXPIRED, CLOSED), with LOCK_LOST (cause
 * NODE_DELETED) when the setACL says our node is gone, and with LOCK_LOST (cause
 * SESSION_MAY_HAVE_EXPIRED) when no round proved enough: never a lease already lost.
 */
export async function proveFresh(client: ZooKeeperClient, margin: number, deadline: Deadline, node: string, acl: LockAcl | undefined): Promise<void> {
  livenessOf(client);
  const session = client.sessionId;
  /** When the last round's sync was answered, on the connection in use. */
  let syncAnswered: number | undefined;
  for (let round = 0; round < PROOF_ROUNDS; round++) {
    if (client.sessionAliveUntil() - margin > performance.now()) return;
    // A sync carries only answers at least G old. After a stall before the proof (a busy
    // machine), every such answer was sent too long ago for the margin, and those since are
    // younger: rounds back to back would each prove the same too-old answer. The next round
    // waits until the last one's sync answer is G old (at once after a stall within a round).
    if (syncAnswered !== undefined) await untilTime(client, syncAnswered + client.livenessRelayMs, deadline);
    try {
      await client.sync('/', { signal: deadline.requestSignal });
      syncAnswered = performance.now();
      await client.setACL(node, nodeAcl(client, acl, node), { signal: deadline.requestSignal });
    } catch (error) {
      // A chain holds through one connection only; after a new one, its handshake is the proof.
      syncAnswered = undefined;
      // Aborted by the deadline: the acquire is over.
      deadline.check();
      // Refused: the node's ACL gives its creator no ADMIN, so no lease on it could ever be proven
      // fresh this way. The session ended: no proof ever will. The caller rejects with it.
      if (error instanceof ZooKeeperError && FINAL_CODES.has(error.code)) throw error;
      // Our node is gone (deleted by someone else since our listing): the server has told us, so
      // no lease on it may be handed out, even for the moment its own watch takes to say so.
      if (error instanceof ZooKeeperError && error.code === 'NONODE') {
        throw new LockError('LOCK_LOST', `our node ${node} was deleted before its lease was handed out`, { path: node, cause: new LockLostError('NODE_DELETED', node, 'our lock node no longer exists') });
      }
      // A lost connection or an unanswered request: the next round waits for the session's next
      // connection (bounded by the deadline; the session's end rejects there).
      if (isTransient(error)) await awaitSession(client, session, deadline);
    }
  }
  if (client.sessionAliveUntil() - margin > performance.now()) return;
  const timeout = client.sessionTimeout;
  const lost = new LockLostError('SESSION_MAY_HAVE_EXPIRED', node, `no proof within the last ${timeout - margin} ms that the leader still knows the session (timeout ${timeout} ms)`);
  throw new LockError('LOCK_LOST', `${PROOF_ROUNDS} rounds of sync and setACL could not prove the session fresh before handing out ${node}: its lease would be born lost`, { path: node, cause: lost });
}

/**
 * Waits until `time` (performance.now() time): less when the deadline passes first (then rejects
 * with its LockError), or the session ends (the next request says so).
 */
async function untilTime(client: ZooKeeperClient, time: number, deadline: Deadline): Promise<void> {
  if (time <= performance.now()) return;
  let wake!: () => void;
  const woken = new Promise<void>((resolve) => (wake = resolve));
  // Unref'd: the client's socket keeps the process alive while it matters.
  const cancel = timerAt(time, wake, true);
  const unsubscribe = client.onState((event) => {
    if (event === 'closed' || event === 'expired') wake();
  });
  try {
    await deadline.race(woken);
  } finally {
    cancel();
    unsubscribe();
  }
}

/** What ends the proof at once (see proveFresh). */
const FINAL_CODES: ReadonlySet<string> = new Set(['NOAUTH', 'SESSIONEXPIRED', 'CLOSED']);

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
  for (const follower of [...state.followers]) {
    if (!state.followers.has(follower)) continue;
    if (now < until - follower.margin) {
      maxMargin = Math.max(maxMargin, follower.margin);
      continue;
    }
    state.followers.delete(follower);
    callListener(() => follower.livenessLost(), []);
  }
  if (state.followers.size > 0) arm(client, state, until - maxMargin);
}

/**
 * A sync a tenth of the session timeout after the previous one was answered; none while
 * disconnected; none after close. Also re-checks the leases' timer after every handshake, and
 * passes each state change on to the followers (after that check, as a lease's own listener
 * heard it after the heartbeat's, which is subscribed first).
 */
function heartbeat(client: ZooKeeperClient, state: Liveness): void {
  let timer: NodeJS.Timeout | undefined;
  const unsubscribe = client.onState((event) => {
    if (event === 'closed' || client.terminated) stop();
    // A reconnect may have negotiated a shorter timeout: the shared timer is due sooner.
    else if ((event === 'connected' || event === 'reconnected') && state.followers.size > 0) check(client, state);
    // Those added meanwhile hear from the next change on; those dropped meanwhile hear no more.
    for (const follower of [...state.followers]) {
      if (state.followers.has(follower)) callListener(() => follower.sessionEvent(event), []);
    }
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
