import { LockError } from './lock-error.js';

export interface AcquireOptions {
  /** Gives up (deleting our contender node first) after this many ms. Without it, waits until the signal aborts. */
  timeout?: number;
  signal?: AbortSignal;
}

/**
 * One bound for a whole acquire, retries and re-queues included: the caller's signal and timeout
 * combined into a signal whose reason is the LockError to reject with.
 */
export class Deadline {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly onAbort: (() => void) | undefined;

  constructor(
    private readonly options: AcquireOptions,
    private readonly path: string,
    private readonly op: string,
  ) {
    const { timeout, signal } = options;
    if (timeout !== undefined && (typeof timeout !== 'number' || !(timeout >= 0) || !Number.isFinite(timeout))) {
      throw new LockError('INVALID_ARGUMENT', `timeout must be a non-negative number of ms, got ${String(timeout)}`, { path, op });
    }
    if (signal?.aborted) {
      this.abortWithCallerReason();
      return;
    }
    if (timeout !== undefined) {
      this.timer = setTimeout(() => this.controller.abort(new LockError('LOCK_TIMEOUT', `not acquired within ${timeout} ms`, { path, op })), timeout);
    }
    if (signal) {
      this.onAbort = () => this.abortWithCallerReason();
      signal.addEventListener('abort', this.onAbort, { once: true });
    }
  }

  private abortWithCallerReason(): void {
    this.controller.abort(new LockError('ABORTED', 'acquire aborted', { path: this.path, op: this.op, cause: this.options.signal?.reason }));
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get expired(): boolean {
    return this.controller.signal.aborted;
  }

  /** Throws the deadline's LockError if it has passed. */
  check(): void {
    if (this.controller.signal.aborted) throw this.controller.signal.reason as LockError;
  }

  /** Resolves `promise`, or rejects with the deadline's error as soon as it passes. */
  race<T>(promise: Promise<T>): Promise<T> {
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

  dispose(): void {
    clearTimeout(this.timer);
    if (this.onAbort) this.options.signal?.removeEventListener('abort', this.onAbort);
  }
}
