import { ZooKeeperError } from '../../client/index.js';

/**
 * Codes of the lock recipes, on top of the client's (`CONNECTIONLOSS`, `NOAUTH`, ...). One meaning
 * has one code in every layer: where the client (or the server) has a name for it, the recipes
 * use that name (`SESSIONEXPIRED`, `ABORTED`, `CLOSED`, `INVALID_ARGUMENT`); they add their own
 * only for what the client cannot mean (README's "Error codes" maps one to the other):
 * - `LOCK_TIMEOUT`: the acquire deadline passed; our contender node was removed first. Not the
 *   client's `TIMEOUT`: that one is a request's, transient, and the recipes retry it; this one is
 *   final.
 * - `ABORTED`: the caller's signal aborted the acquire; our contender node was removed first.
 * - `SESSIONEXPIRED`: the session expired while waiting and the caller asked not to re-queue.
 * - `UPGRADE_NOT_SUPPORTED`: a read lock holder asked for the write lock (that would deadlock).
 * - `WOULD_DEADLOCK`: a non-reentrant lock was acquired again from the call chain that holds it.
 * - `ALREADY_RELEASED`: a lease was released twice.
 * - `NOT_HELD`: a guarded write or downgrade on a lease whose lock is no longer held.
 * - `DOWNGRADE_CONFLICT`: others kept writing into our write node while a downgrade tried to mark
 *   it; the write lease is still held, and the node unmarked (readers still wait for it).
 * - `LOCK_LOST`: an acquire from inside a section whose lease was lost (its node may still be
 *   there, and a new node of ours would wait behind it); the lease's LockLostError is the cause.
 * - `GUARD_NOT_SUPPORTED`: `guard()` on a lease whose node a namesake may replace (SimpleLock).
 * - `LEASE_LIMIT_MISMATCH`: a semaphore's limit differs from the one recorded on its path by
 *   the contenders before it (see lease-limit.ts).
 * - `FOREIGN_SEMAPHORE`: a semaphore's path holds children that are not zklock's or Curator's
 *   (`locks/`, `leases/`): kazoo's Semaphore keeps its leases there, and the two cannot count
 *   each other's (see lease-limit.ts). Thrown before a lease is taken.
 * - `INVALID_ARGUMENT`: bad options (a negative timeout, a `maxHold` that is not above 0, a semaphore of 0, more leases than it allows, an empty lock set).
 * - `REVOCATION_REQUESTED`: not thrown; the reason of a revocable lease's `revocationRequested`
 *   signal (someone asked the holder to let go; see revocation.ts).
 */
export type LockErrorCode =
  | 'LOCK_TIMEOUT'
  | 'ABORTED'
  | 'SESSIONEXPIRED'
  | 'UPGRADE_NOT_SUPPORTED'
  | 'WOULD_DEADLOCK'
  | 'ALREADY_RELEASED'
  | 'NOT_HELD'
  | 'DOWNGRADE_CONFLICT'
  | 'LOCK_LOST'
  | 'GUARD_NOT_SUPPORTED'
  | 'LEASE_LIMIT_MISMATCH'
  | 'FOREIGN_SEMAPHORE'
  | 'INVALID_ARGUMENT'
  | 'REVOCATION_REQUESTED';

export class LockError extends ZooKeeperError {
  declare readonly code: LockErrorCode;

  constructor(code: LockErrorCode, message: string, details: { path?: string | undefined; op?: string; cause?: unknown } = {}) {
    super(code, message, details);
    this.name = 'LockError';
  }
}

/**
 * Why a lease's signal aborted:
 * - `SESSIONEXPIRED`: the session that owned the node is gone, and with it the node.
 * - `NODE_DELETED`: someone else deleted our node (an operator, a forced release).
 * - `SESSION_MAY_HAVE_EXPIRED`: the leader may already have expired the session: the proof that it
 *   heard from us (client.sessionAliveUntil()) ran out within the safety margin, connected or not.
 * - `CLOSED`: the client was closed.
 * - `HOLD_EXPIRED`: the lease was held for its `maxHold` (see hold-limit.ts). Our node is still
 *   there until released (or force-released), but the holder has overrun its bound and must stop.
 * - `RELEASED`: the lease was released normally.
 */
export type LockLostReason = 'SESSIONEXPIRED' | 'NODE_DELETED' | 'SESSION_MAY_HAVE_EXPIRED' | 'CLOSED' | 'HOLD_EXPIRED' | 'RELEASED';

/** The reason a lease's signal carries. */
export class LockLostError extends ZooKeeperError {
  declare readonly code: LockLostReason;

  constructor(
    readonly reason: LockLostReason,
    path: string,
    message: string,
  ) {
    super(reason, message, { path, op: 'lease' });
    this.name = 'LockLostError';
  }
}

// The recipes' codes join ZooKeeperError's code union (see ErrorCodeExtensions).
declare module '../../protocol/zookeeper-error.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the merge adds the keys of its supertype
  interface ErrorCodeExtensions extends Record<LockErrorCode | LockLostReason, true> {}
}
