import { ZooKeeperError } from '../../protocol/index.js';
import type { WatchEvent, Watcher } from './watch-event.js';
import { callListener } from '../state/call-listener.js';

export interface PersistentWatchOptions {
  /**
   * Events the async iterator holds for a consumer that has not asked for them yet. One more
   * ends the iteration with `WATCH_OVERFLOW` once the held events are taken, and removes the
   * watch: events were missed, so what it watches must be read again. Default 1024.
   */
  maxBuffered?: number;
}

const DEFAULT_MAX_BUFFERED = 1024;

/**
 * A persistent (optionally recursive) watch: events until removed, as a listener and as an async
 * iterable. Iteration ends when the watch is removed, the session expires or the client closes.
 * A lost connection is told as `disconnected`, and its end as `reconnected`: the changes between
 * the two are not reported, read the watched nodes again (see {@link WatchEvent}).
 */
export class PersistentWatch implements AsyncIterable<WatchEvent> {
  private readonly listeners = new Set<Watcher>();
  private readonly buffered: WatchEvent[] = [];
  private readonly waiting: ((result: IteratorResult<WatchEvent>) => void)[] = [];
  private readonly maxBuffered: number;
  private iterated = false;
  private ended = false;
  /** Told `disconnected` and not yet `reconnected`: one of each per gap, a `reconnected` only after a `disconnected`. */
  private inGap = false;
  /** Why the iteration ends after the buffered events, when a slow consumer made it miss some. */
  private overflow: ZooKeeperError | undefined;

  constructor(
    readonly path: string,
    readonly recursive: boolean,
    private readonly onRemove: (watch: PersistentWatch) => Promise<void>,
    options: PersistentWatchOptions = {},
  ) {
    const maxBuffered = options.maxBuffered ?? DEFAULT_MAX_BUFFERED;
    if (!Number.isSafeInteger(maxBuffered) || maxBuffered < 1) {
      throw new ZooKeeperError('INVALID_ARGUMENT', `maxBuffered must be a positive integer, not ${String(maxBuffered)}`, { op: 'addWatch', path });
    }
    this.maxBuffered = maxBuffered;
  }

  get active(): boolean {
    return !this.ended;
  }

  on(listener: Watcher): this {
    this.listeners.add(listener);
    return this;
  }

  off(listener: Watcher): this {
    this.listeners.delete(listener);
    return this;
  }

  /** Called by the watch manager. */
  deliver(event: WatchEvent): void {
    if (this.ended) return;
    if (event.type === 'disconnected' || event.type === 'reconnected') {
      const gap = event.type === 'disconnected';
      if (gap === this.inGap) return;
      this.inGap = gap;
    }
    for (const listener of this.listeners) callListener(listener, [event]);
    const next = this.waiting.shift();
    if (next) next({ value: event, done: false });
    else if (this.iterated) {
      if (this.buffered.length >= this.maxBuffered) return this.overflowed();
      this.buffered.push(event);
    }
    if (event.type === 'expired' || event.type === 'closed') this.end();
  }

  /**
   * Dropping this event silently would leave the consumer with a stream that looks whole, and
   * holding it would let a consumer that never catches up grow the buffer without bound.
   */
  private overflowed(): void {
    this.overflow = new ZooKeeperError(
      'WATCH_OVERFLOW',
      `the consumer fell more than ${this.maxBuffered} events behind (maxBuffered) and missed events: read the watched nodes again`,
      { op: 'addWatch', path: this.path },
    );
    // Its stream has a gap now: a watch that goes on would only hide it.
    this.remove().catch(() => undefined);
  }

  /** Removes the watch locally, and on the server when no other local registration needs it. */
  async remove(): Promise<void> {
    if (this.ended) return;
    this.end();
    await this.onRemove(this);
  }

  private end(): void {
    this.ended = true;
    for (const resolve of this.waiting.splice(0)) resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<WatchEvent> {
    this.iterated = true;
    return {
      next: () => {
        const event = this.buffered.shift();
        if (event) return Promise.resolve({ value: event, done: false });
        const overflow = this.overflow;
        this.overflow = undefined;
        if (overflow) return Promise.reject(overflow);
        if (this.ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => this.waiting.push(resolve));
      },
      return: async () => {
        await this.remove();
        return { value: undefined, done: true };
      },
    };
  }
}
