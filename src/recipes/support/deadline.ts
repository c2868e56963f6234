import { performance } from 'node:perf_hooks';
import { checkHoldOptions } from '../lease/hold-limit.js';
import type { HoldOptions } from '../lease/hold-limit.js';
import { LockError } from './lock-error.js';
import { timerAt } from './timer-at.js';

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

/**
 * One bound for a whole acquire, retries and re-queues included: the caller's signal and timeout
 * combined into a signal whose reason is the LockError to reject with.
 */
export class Deadline {
  // Created on first use: an unbounded, uncontended acquire never needs one.
  private controllerInstance: AbortController | undefined;
  private cancelTimer: (() => void) | undefined;
  private readonly onAbort: (() => void) | undefined;

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
      throw new LockError('INVALID_ARGUMENT', `timeout must be a number of ms more than 0 (to not wait, use tryAcquire()), got ${String(timeout)}`, { path, op });
    }
    // Every acquire makes its Deadline first: the hold bound is checked here too, before anything is created.
    checkHoldOptions(options, path, op);
    if (signal?.aborted) {
      this.abortWithCallerReason();
      return;
    }
    if (timeout !== undefined) {
      const expire = (): void => this.controller.abort(new LockError('LOCK_TIMEOUT', `not acquired within ${timeout} ms`, { path: this.path, op: this.op }));
      this.cancelTimer = timerAt(performance.now() + timeout, expire);
    }
    if (signal) {
      this.onAbort = () => this.abortWithCallerReason();
      signal.addEventListener('abort', this.onAbort, { once: true });
    }
  }

  private abortWithCallerReason(): void {
    this.controller.abort(new LockError('ABORTED', `${this.op} aborted`, { path: this.path, op: this.op, cause: this.options.signal?.reason }));
  }

  private get controller(): AbortController {
    return (this.controllerInstance ??= new AbortController());
  }

  get signal(): AbortSignal {
    return this.controller.signal;
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
    return this.controllerInstance?.signal.aborted ?? false;
  }

  /** Throws the deadline's LockError if it has passed. */
  check(): void {
    if (this.expired) throw this.controller.signal.reason as LockError;
  }

  /** Resolves `promise`, or rejects with the deadline's error as soon as it passes. */
  race<T>(promise: Promise<T>): Promise<T> {
    if (!this.bounded) return promise;
    if (this.expired) {
      promise.catch(() => undefined);
      return Promise.reject(this.controller.signal.reason as LockError);
    }
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => reject(this.controller.signal.reason as LockError);
      this.controller.signal.addEventListener('abort', onAbort, { once: true });
      promise.then(
        (value) => {
          this.controller.signal.removeEventListener('abort', onAbort);
          resolve(value);
        },
        (error: unknown) => {
          this.controller.signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      );
    });
  }

  /** What to reject with: the deadline's own LockError once it has passed (the requests it bounded reject with the client's ABORTED), else `error`. */
  failure(error: unknown): unknown {
    return this.expired ? this.controller.signal.reason : error;
  }

  dispose(): void {
    this.cancelTimer?.();
    if (this.onAbort) this.options.signal?.removeEventListener('abort', this.onAbort);
  }
}
