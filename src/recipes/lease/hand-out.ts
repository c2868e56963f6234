import type { ZooKeeperClient } from '../../client/index.js';
import { ZooKeeperError } from '../../client/index.js';
import { awaitBriefly } from '../support/abandon.js';
import { LockError } from '../support/lock-error.js';
import type { Deadline } from '../support/deadline.js';
import type { HoldLimit, HoldOptions } from './hold-limit.js';
import { limitHold, startHold } from './hold-limit.js';

/** The clients a lease's nodes live on (a MultiLease's may be several). A symbol the package does not export. */
export const clientsOf: unique symbol = Symbol('clientsOf');
/** HandedOut's check that it is not lost as it is handed out. */
export const lostNow: unique symbol = Symbol('lostNow');

/** What a lock hands out: a Lease, or a MultiLease. */
export interface HandedOut {
  /** Why it is lost, asking the clock (see LeaseMonitor), without making its signal; undefined while it is not. */
  [lostNow](): unknown;
  [limitHold](limit: HoldLimit): void;
  [Symbol.asyncDispose](): Promise<void>;
  readonly [clientsOf]: readonly ZooKeeperClient[];
}

/**
 * Hands `lease` out: the last step of every acquire (the queue locks, SimpleLock, Semaphore,
 * MultiLock), and its hold's clock starts (see startHold). Refused once the acquire's deadline has
 * passed (its LockError, LOCK_TIMEOUT or ABORTED), once `close()` of a client it lives on has
 * begun (CLOSED): its caller gave the lock up, or its client is ending the session the lease
 * stands on (a lease made then may never hear the close: see LeaseMonitor), and once the lease is
 * lost (LOCK_LOST, its LockLostError as `cause`): proveFresh proved the session before the lease
 * was made, but the steps after it (a revocable lease's first read of its node, a MultiLock's
 * check of its other locks) may be answered long after, with the proof run out meanwhile (a
 * reply delayed, a stall). Checked in the step that hands it out, so nothing passes in between.
 * A refused lease is released first, as a failed acquire gives up its node (see giveUp: briefly
 * past the deadline; a closing client's nodes go with its session).
 */
export async function handOut<T extends HandedOut>(lease: T, hold: HoldOptions, deadline: Deadline): Promise<T> {
  const clients = lease[clientsOf];
  const closing = clients.some((client) => client.closing);
  const lost = closing || deadline.expired ? undefined : lease[lostNow]();
  if (!closing && !deadline.expired && lost === undefined) return startHold(lease, hold);
  const released = lease[Symbol.asyncDispose]();
  if (closing) {
    released.catch(() => undefined);
    throw new ZooKeeperError('CLOSED', 'the client was closed before the lock was handed out', { path: deadline.path, op: deadline.op });
  }
  await awaitBriefly(clients[0]!, released).catch(() => undefined);
  // The deadline's own error if it passed meanwhile, as a failed acquire's.
  throw deadline.failure(lost === undefined ? undefined : new LockError('LOCK_LOST', `the lock ${deadline.path} was lost before its lease was handed out`, { path: deadline.path, op: deadline.op, cause: lost }));
}
