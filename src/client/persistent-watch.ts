import type { WatchEvent, Watcher } from './watch-event.js';

/**
 * A persistent (optionally recursive) watch: events until removed, as a listener and as an async
 * iterable. Iteration ends when the watch is removed, the session expires or the client closes.
 */
export class PersistentWatch implements AsyncIterable<WatchEvent> {
  private readonly listeners = new Set<Watcher>();
  private readonly buffered: WatchEvent[] = [];
  private readonly waiting: ((result: IteratorResult<WatchEvent>) => void)[] = [];
  private iterated = false;
  private ended = false;

  constructor(
    readonly path: string,
    readonly recursive: boolean,
    private readonly onRemove: (watch: PersistentWatch) => Promise<void>,
  ) {}

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
    for (const listener of this.listeners) listener(event);
    const next = this.waiting.shift();
    if (next) next({ value: event, done: false });
    else if (this.iterated) this.buffered.push(event);
    if (event.type === 'expired' || event.type === 'closed') this.end();
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
