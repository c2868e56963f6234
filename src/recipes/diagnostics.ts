import * as diagnostics_channel from 'node:diagnostics_channel';
import type { TracingChannel } from 'node:diagnostics_channel';
import { performance } from 'node:perf_hooks';
import { hexId } from '../client/diagnostics.js';
import type { Layout } from './queue/contender-name.js';
import type { LeaseView, MultiLeaseView } from './lease/lease-view.js';
import type { LockLostReason } from './support/lock-error.js';

/**
 * The locks' diagnostics_channel contract (see the README's "Tracing and metrics"). As on the
 * client's channels, every field but `result` and `error` (a Lease, an Error) is JSON-safe: a
 * fencing token is a decimal string (BigInt(token) gives it back), a session id hex. Times are
 * milliseconds. Nothing is built, and no clock read, while no lock channel has a subscriber.
 */

/** Which recipe a lock event comes from. */
export type LockKind = 'mutex' | 'read' | 'write' | 'semaphore' | 'simple' | 'multi';

/** What every lock event names. */
interface LockFacts {
  /** The lock path (a semaphore's path, a multi-lock's first path in sorted order). */
  lockPath: string;
  kind: LockKind;
  /** The node naming scheme of a queue lock (mutex, read, write, semaphore). */
  layout?: Layout;
}

/**
 * The context of one acquire or tryAcquire, traced from the call to its settlement. One refused
 * before it queues (WOULD_DEADLOCK, see QueueLock.precheck) is not traced.
 */
export interface AcquireMessage extends LockFacts {
  /** Contenders ahead of ours in the first listing after our node was created (0: none, or none needed listing); queue locks only. */
  queuePosition?: number;
  /** Milliseconds from the call to its settlement; set before asyncStart/asyncEnd or error are published. */
  waitTime?: number;
  /** Our node, once held (not for a multi-lock). */
  node?: string;
  /** Once held: the lease's fencing token, decimal (not for a multi-lock). */
  fencingToken?: string;
  /** Once held: the session that owns the node, hex. */
  sessionId?: string;
  /** The error's code (LOCK_TIMEOUT, ABORTED, ...) when it failed. */
  errorCode?: string;
  /** Set by the TracingChannel: the Lease or MultiLease (null from a tryAcquire that found the lock taken), or the error. */
  result?: unknown;
  error?: unknown;
}

/** A held lock as release, lost and revocation tell it. */
export interface LeaseMessage {
  lockPath: string;
  /** Undefined for a lease acquired while no lock channel had a subscriber, or made by a downgrade. */
  kind: LockKind | undefined;
  node: string;
  fencingToken: string;
  sessionId: string;
  /** Milliseconds since the lease was handed out; undefined when its acquire was not traced (no subscriber then). */
  holdTime: number | undefined;
}

/** The context of one Lease.release(), traced; `error` is set by the TracingChannel when it failed. */
export interface ReleaseMessage extends LeaseMessage {
  /** Set when the lease already knew its lock lost as release() was called: the reason zklock:lock:lost told. */
  lostReason?: Exclude<LockLostReason, 'RELEASED'>;
  result?: unknown;
  error?: unknown;
}

/** A lease learned that its lock is, or may be, lost. */
export interface LostMessage extends LeaseMessage {
  reason: LockLostReason;
  message: string;
}

export const acquireChannel: TracingChannel<AcquireMessage, AcquireMessage> = diagnostics_channel.tracingChannel('zklock:lock:acquire');
export const releaseChannel: TracingChannel<ReleaseMessage, ReleaseMessage> = diagnostics_channel.tracingChannel('zklock:lock:release');
export const lostChannel = diagnostics_channel.channel('zklock:lock:lost');
export const revocationChannel = diagnostics_channel.channel('zklock:lock:revocation');

/** What a traced acquire learned of its lease, for the events of its hold. */
const held = new WeakMap<LeaseView, { kind: LockKind; acquiredAt: number }>();

/**
 * The options of locks that serve another recipe (a semaphore's queue lock): their acquires and
 * leases publish nothing, so that the events are those of the recipe the caller used.
 */
const internal = new WeakSet<object>();

/** Marks `options` as those of an internal lock (see `internal`). */
export function internalLock<T extends object>(options: T): T {
  internal.add(options);
  return options;
}

/** Whether a lock or lease with `options` publishes no events (see `internal`). */
export function isInternal(options: object): boolean {
  return internal.has(options);
}

/** Whether an acquire is worth tracing: someone listens to it, or to the events that need what it learns. */
export function lockTraced(): boolean {
  return acquireChannel.hasSubscribers || releaseChannel.hasSubscribers || lostChannel.hasSubscribers || revocationChannel.hasSubscribers;
}

/**
 * Runs `acquire` traced on zklock:lock:acquire; `acquire` may note the queue position in the
 * message. Only called when lockTraced(): the caller's closure, the message and the clock reads
 * cost nothing otherwise.
 */
export function traceAcquire<T extends LeaseView | MultiLeaseView | null>(facts: LockFacts, acquire: (message: AcquireMessage) => Promise<T>): Promise<T> {
  const message: AcquireMessage = { lockPath: facts.lockPath, kind: facts.kind, layout: facts.layout };
  const started = performance.now();
  return acquireChannel.tracePromise(
    () =>
      acquire(message).then(
        (result) => {
          const now = performance.now();
          message.waitTime = now - started;
          const leases: readonly LeaseView[] = !result ? [] : 'leases' in result ? result.leases : [result];
          if (result && !('leases' in result)) {
            message.node = result.node;
            message.fencingToken = result.fencingToken.toString();
            message.sessionId = hexId(result.sessionId);
          }
          // A multi-lock's leases keep what their own locks' acquires noted.
          for (const lease of leases) if (!held.has(lease)) held.set(lease, { kind: facts.kind, acquiredAt: now });
          return result;
        },
        (error: unknown) => {
          message.waitTime = performance.now() - started;
          message.errorCode = (error as { code?: string } | undefined)?.code;
          throw error;
        },
      ),
    message,
  );
}

function leaseMessage(lease: LeaseView): LeaseMessage {
  const facts = held.get(lease);
  return {
    lockPath: lease.lockPath,
    kind: facts?.kind,
    node: lease.node,
    fencingToken: lease.fencingToken.toString(),
    sessionId: hexId(lease.sessionId),
    holdTime: facts && performance.now() - facts.acquiredAt,
  };
}

/** Runs `release` traced on zklock:lock:release, `endedBy` what the lease knew of its end then; only called with a subscriber. */
export function traceRelease(lease: LeaseView, endedBy: LockLostReason | undefined, release: () => Promise<void>): Promise<void> {
  const message: ReleaseMessage = leaseMessage(lease);
  if (endedBy && endedBy !== 'RELEASED') message.lostReason = endedBy;
  return releaseChannel.tracePromise(release, message);
}

/** Publishes on zklock:lock:lost; only called with a subscriber. */
export function publishLost(lease: LeaseView, reason: LockLostReason, message: string): void {
  lostChannel.publish({ ...leaseMessage(lease), reason, message } satisfies LostMessage);
}

/** Publishes on zklock:lock:revocation; only called with a subscriber. */
export function publishRevocation(lease: LeaseView): void {
  revocationChannel.publish(leaseMessage(lease));
}
