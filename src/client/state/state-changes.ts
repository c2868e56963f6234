import type { SessionEvent } from '../../connection/index.js';
import type { ZooKeeperError } from '../../protocol/index.js';
import type { StateListener } from './state-listeners.js';

/** One state change of a client, as `client.states()` yields it. */
export interface StateChange {
  event: SessionEvent;
  /** Why, for `suspended` and `expired`. */
  reason?: ZooKeeperError | undefined;
}

/** Changes kept for a consumer that has not asked for them yet; past this the oldest go (`client.state` is always current). */
export const MAX_BUFFERED_STATE_CHANGES = 64;

/**
 * A client's state changes from the iterator's creation on, as an async iterator: they wait in a
 * bounded buffer for the consumer. It ends after `closed` (every change before it delivered),
 * when `signal` aborts, or when the consumer stops (`break`, `return()`): the subscription goes
 * with it.
 */
export class StateChanges implements AsyncIterableIterator<StateChange> {
  private readonly buffer: StateChange[] = [];
  /** Consumers' next() calls that found nothing to take. */
  private readonly waiting: ((result: IteratorResult<StateChange, undefined>) => void)[] = [];
  private readonly unsubscribe: (() => void) | undefined;
  private ended = false;
  private readonly onAbort = (): void => this.end(true);

  /** `subscribe` is undefined when no change can come any more (a closed client). */
  constructor(
    subscribe: ((listener: StateListener) => () => void) | undefined,
    private readonly signal: AbortSignal | undefined,
  ) {
    if (!subscribe || signal?.aborted) {
      this.ended = true;
      return;
    }
    this.unsubscribe = subscribe((event, reason) => this.push({ event, reason }));
    signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  private push(change: StateChange): void {
    const waiter = this.waiting.shift();
    if (waiter) waiter({ value: change, done: false });
    else {
      if (this.buffer.length >= MAX_BUFFERED_STATE_CHANGES) this.buffer.shift();
      this.buffer.push(change);
    }
    if (change.event === 'closed') this.end(false);
  }

  /** Stops listening; `drop` forgets what the consumer has not taken yet. */
  private end(drop: boolean): void {
    if (drop) this.buffer.length = 0;
    if (this.ended) return;
    this.ended = true;
    this.unsubscribe?.();
    this.signal?.removeEventListener('abort', this.onAbort);
    for (const waiter of this.waiting.splice(0)) waiter({ value: undefined, done: true });
  }

  next(): Promise<IteratorResult<StateChange, undefined>> {
    const change = this.buffer.shift();
    if (change) return Promise.resolve({ value: change, done: false });
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  return(): Promise<IteratorResult<StateChange, undefined>> {
    this.end(true);
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
