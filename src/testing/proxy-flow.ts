import type { Socket } from 'node:net';

/** `upstream`: client → server. `downstream`: server → client. */
export type Direction = 'upstream' | 'downstream';

/** One direction, or both at once. */
export type DirectionSelector = Direction | 'both';

/** The fault settings a flow consults for every chunk, as they are at that moment. */
export interface FlowFaults {
  readonly blackholed: boolean;
  readonly latencyMs: number;
}

/** What a flow reports about every chunk it forwarded (once written to the kernel) or dropped. */
export interface FlowChunk {
  readonly chunk: Buffer;
  readonly dropped: boolean;
}

interface Pending {
  readonly due: number;
  /** `undefined` stands for the source's FIN. */
  readonly chunk: Buffer | undefined;
}

/**
 * Moves bytes from one socket to the other, applying black hole and latency. Order is
 * preserved: a chunk never overtakes an earlier one, even when latency is lowered meanwhile.
 * A black-holed chunk (or FIN) is gone for good, like on a partitioned network.
 */
export class ProxyFlow {
  forwardedBytes = 0;
  droppedBytes = 0;
  readonly #source: Socket;
  readonly #destination: Socket;
  readonly #faults: () => FlowFaults;
  readonly #report: (chunk: FlowChunk) => void;
  readonly #queue: Pending[] = [];
  #timer: NodeJS.Timeout | undefined;
  /** Set while the source is paused for the destination's 'drain': one wait, however many writes met a full buffer. */
  #awaitingDrain = false;

  /**
   * `makeRewrite`, when given, makes this flow's rewriter (on the first bytes), which sees the
   * source's bytes first and may hold some back (returning an empty buffer); bytes it still holds
   * when the source ends are lost with the connection. If either throws, the connection is reset
   * and the error rethrown on its own.
   */
  constructor(
    source: Socket,
    destination: Socket,
    faults: () => FlowFaults,
    report: (chunk: FlowChunk) => void,
    makeRewrite?: () => (chunk: Buffer) => Buffer,
  ) {
    this.#source = source;
    this.#destination = destination;
    this.#faults = faults;
    this.#report = report;
    let rewrite: ((chunk: Buffer) => Buffer) | undefined;
    source.on('data', (chunk: Buffer) => {
      let bytes = chunk;
      try {
        if (makeRewrite !== undefined) bytes = (rewrite ??= makeRewrite())(chunk);
      } catch (error) {
        // The caller's rewriter failed: this stream can no longer be forwarded faithfully. Only this
        // connection ends, reset on both sides; the error is thrown on its own, after the proxy's
        // handler has returned, as the client does with a listener's.
        source.resetAndDestroy();
        destination.resetAndDestroy();
        queueMicrotask(() => {
          throw error;
        });
        return;
      }
      if (bytes.length > 0) this.#accept(bytes);
    });
    source.on('end', () => this.#accept(undefined));
  }

  #accept(chunk: Buffer | undefined): void {
    const { blackholed, latencyMs } = this.#faults();
    if (blackholed) {
      if (chunk !== undefined) {
        this.droppedBytes += chunk.length;
        this.#report({ chunk, dropped: true });
      }
      return;
    }
    const last = this.#queue.at(-1);
    this.#queue.push({ due: Math.max(Date.now() + latencyMs, last?.due ?? 0), chunk });
    this.#flush();
  }

  #flush(): void {
    clearTimeout(this.#timer);
    for (let head = this.#queue[0]; head !== undefined && head.due <= Date.now(); head = this.#queue[0]) {
      this.#queue.shift();
      this.#send(head.chunk);
    }
    const next = this.#queue[0];
    if (next !== undefined) {
      // Unref'd: the sockets whose bytes we hold decide whether the process stays alive.
      this.#timer = setTimeout(() => this.#flush(), next.due - Date.now()).unref();
    }
  }

  #send(chunk: Buffer | undefined): void {
    if (this.#destination.destroyed) return;
    if (chunk === undefined) {
      this.#destination.end();
      return;
    }
    const accepted = this.#destination.write(chunk, (error) => {
      if (error !== undefined && error !== null) return;
      this.forwardedBytes += chunk.length;
      this.#report({ chunk, dropped: false });
    });
    if (!accepted && !this.#awaitingDrain) {
      // A flush writes every chunk that came due at once; a listener each would pile up on a
      // destination that stopped reading (Node warns at 11).
      this.#awaitingDrain = true;
      this.#source.pause();
      this.#destination.once('drain', () => {
        this.#awaitingDrain = false;
        this.#source.resume();
      });
    }
  }

  /** True when the direction this flow feeds is black-holed right now. */
  get blackholed(): boolean {
    return this.#faults().blackholed;
  }

  /** Drops whatever is still waiting out its latency. */
  discard(): void {
    clearTimeout(this.#timer);
    this.#queue.length = 0;
  }
}
