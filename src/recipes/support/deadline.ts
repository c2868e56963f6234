import { performance } from 'node:perf_hooks';
import { checkHoldOptions } from '../lease/hold-limit.js';
import type { HoldOptions } from '../lease/hold-limit.js';
import { LockError } from './lock-error.js';
import { getEventListeners } from 'node:events';
import { untilAborted } from './any-signal.js';
import type { Timed } from './deadline-clock.js';
import { schedule, unschedule } from './deadline-clock.js';

export interface AcquireOptions extends HoldOptions {
  /**
   * Gives up (deleting our contender node first) after this many ms: more than 0, any finite
   * number (30 days works). Without it, waits until the signal aborts. As for every duration of
   * the client, 0 is INVALID_ARGUMENT: to not wait at all, use `tryAcquire()`.
   */
  timeout?: number;
  signal?: AbortSignal;
}

/**
 * Options of `tryAcquire`: the hold bound, and a signal that ends the try early (it rejects with
 * ABORTED and leaves no node). A try does not wait for the lock, but it takes round trips, and on
 * a lock with a `lockDelay` it may have a delay to serve (see MutexOptions.lockDelay): bound that
 * with `signal: AbortSignal.timeout(ms)`.
 */
export interface TryAcquireOptions extends HoldOptions {
  signal?: AbortSignal;
  /** Refused (INVALID_ARGUMENT): a try has no timeout; bound it with `signal: AbortSignal.timeout(ms)`. */
  timeout?: never;
}

/**
 * What bounds a try: its hold and signal. A timeout (from an untyped caller, or an AcquireOptions
 * object) is refused, not dropped: dropped, a try serving a lockDelay would outlast it unbounded.
 */
export function tryOnly(options: TryAcquireOptions, path: string): TryAcquireOptions {
  const { timeout } = options as { timeout?: number };
  if (timeout !== undefined) {
    throw new LockError('INVALID_ARGUMENT', `tryAcquire takes no timeout (got ${String(timeout)}): bound it with signal: AbortSignal.timeout(ms)`, { path, op: 'tryAcquire' });
  }
  return { maxHold: options.maxHold, forceReleaseAfter: options.forceReleaseAfter, signal: options.signal };
}

/** A wait parked on a deadline (see Deadline.park): told once when the deadline passes. */
export interface ParkedWait {
  handleEvent(): void;
}

/**
 * One bound for a whole acquire, retries and re-queues included: the caller's signal and timeout
 * combined into a LockError to reject with (LOCK_TIMEOUT or ABORTED).
 *
 * What it costs a waiter matters (10,000 waiters must fit in 20 MB, see the memory bench), so
 * nothing is made that a wait does not use: its timeout is a slot on the process's one deadline
 * clock (deadline-clock.ts), not a timer of its own; the AbortSignal that bounds requests is made
 * when a request asks for it; and a waiter parked between requests is told directly (park), not
 * through a listener on that signal. Parking also lets the signal go when no request listens to
 * it any more (about 800 bytes of AbortController, signal and EventTarget state); the next request
 * gets a new one. A request that still listens keeps it: every request the deadline bounds is
 * aborted when it passes, as before.
 */
export class Deadline implements Timed {
  private controllerInstance: AbortController | undefined;
  /** What it failed with once the timeout passed or the caller aborted. */
  private reason: LockError | undefined;
  private readonly onAbort: (() => void) | undefined;
  /** The wait parked on it (see park). */
  private parked: ParkedWait | undefined;
  readonly endAt: number;
  clockSlot = -1;

  constructor(
    private readonly options: AcquireOptions,
    /** The lock's path: its errors name it. */
    readonly path: string,
    /** The call it bounds ('acquire', 'tryAcquire'): its errors name it. */
    readonly op: string,
  ) {
    const { timeout, signal } = options;
    // 0 cannot spare the round trips of joining the queue, so it would refuse even a free lock: not a timeout (tryAcquire does not wait).
    if (timeout !== undefined && (typeof timeout !== 'number' || !(timeout > 0) || !Number.isFinite(timeout))) {
      throw new LockError('INVALID_ARGUMENT', `timeout must be a finite number of ms more than 0 (to wait without a bound, leave it out; to not wait, use tryAcquire()), got ${String(timeout)}`, { path, op });
    }
    // Every acquire makes its Deadline first: the hold bound is checked here too, before anything is created.
    checkHoldOptions(options, path, op);
    this.endAt = timeout === undefined ? Infinity : performance.now() + timeout;
    if (signal?.aborted) {
      this.abortWithCallerReason();
      return;
    }
    if (timeout !== undefined) schedule(this);
    if (signal) {
      this.onAbort = () => this.abortWithCallerReason();
      signal.addEventListener('abort', this.onAbort, { once: true });
    }
  }

  /** The deadline clock's call: the timeout passed. */
  expire(): void {
    this.fail(new LockError('LOCK_TIMEOUT', `not acquired within ${this.options.timeout} ms`, { path: this.path, op: this.op }));
  }

  private abortWithCallerReason(): void {
    this.fail(new LockError('ABORTED', `${this.op} aborted`, { path: this.path, op: this.op, cause: this.options.signal?.reason }));
  }

  private fail(reason: LockError): void {
    if (this.reason) return;
    this.reason = reason;
    this.controllerInstance?.abort(reason);
    const parked = this.parked;
    this.parked = undefined;
    parked?.handleEvent();
  }

  /** The signal that bounds requests: aborted (with the LockError as its reason) when the deadline passes. */
  get signal(): AbortSignal {
    if (!this.controllerInstance) {
      this.controllerInstance = new AbortController();
      if (this.reason) this.controllerInstance.abort(this.reason);
    }
    return this.controllerInstance.signal;
  }

  /** False when neither a timeout nor a signal can end the wait. */
  get bounded(): boolean {
    return this.options.timeout !== undefined || this.options.signal !== undefined;
  }

  /** The signal to hand to client requests, or none when nothing can end the wait (one listener fewer per request). */
  get requestSignal(): AbortSignal | undefined {
    return this.bounded ? this.signal : undefined;
  }

  get expired(): boolean {
    return this.reason !== undefined;
  }

  /**
   * Parks `wait` on the deadline: its handleEvent is called once when the deadline passes (at once
   * if it has), unless unparked first. One wait at a time; another one meanwhile listens on the
   * signal instead. While a wait is parked, no request should be in flight for it: the signal
   * goes if nothing listens to it (see the class comment).
   */
  park(wait: ParkedWait): void {
    if (this.reason) return wait.handleEvent();
    if (this.parked && this.parked !== wait) {
      this.signal.addEventListener('abort', wait, { once: true });
      return;
    }
    this.parked = wait;
    const controller = this.controllerInstance;
    if (controller && getEventListeners(controller.signal, 'abort').length === 0) this.controllerInstance = undefined;
  }

  /** Undoes park(). */
  unpark(wait: ParkedWait): void {
    if (this.parked === wait) this.parked = undefined;
    else this.controllerInstance?.signal.removeEventListener('abort', wait);
  }

  /** Throws the deadline's LockError if it has passed. */
  check(): void {
    if (this.reason) throw this.reason;
  }

  /** Resolves `promise`, or rejects with the deadline's error as soon as it passes. */
  race<T>(promise: Promise<T>): Promise<T> {
    return this.bounded ? untilAborted(promise, this.signal, () => this.reason) : promise;
  }

  /** What to reject with: the deadline's own LockError once it has passed (the requests it bounded reject with the client's ABORTED), else `error`. */
  failure(error: unknown): unknown {
    return this.reason ?? error;
  }

  dispose(): void {
    unschedule(this);
    if (this.onAbort) this.options.signal?.removeEventListener('abort', this.onAbort);
  }
}
