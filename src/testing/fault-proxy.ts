import { createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { withTimeout } from './bounded-wait.js';
import { HarnessError } from './harness-error.js';
import { LOOPBACK } from './loopback-ports.js';
import { DIRECTIONS, directionsOf, ProxyConnection } from './proxy-connection.js';
import type { ProxyChunkEvent, RequestDecider } from './proxy-connection.js';
import type { Direction, DirectionSelector } from './proxy-flow.js';

/** Where a {@link FaultProxy} forwards to. */
export interface FaultProxyOptions {
  /** The target's port, e.g. `server.port`. */
  readonly targetPort: number;
  /** The target's host. Default 127.0.0.1. */
  readonly targetHost?: string;
  /**
   * Called for every new connection; the function it returns rewrites that connection's client →
   * server bytes before any fault applies, and may hold bytes back by returning an empty buffer
   * (e.g. to rewrite a handshake split over several chunks). Default: bytes pass unchanged.
   */
  readonly rewriteUpstream?: () => (chunk: Buffer) => Buffer;
  /**
   * Called for every client request (after `rewriteUpstream`) on a plain connection to a
   * ZooKeeper server; its verdict forwards the request, resets the connection with the request in
   * flight, or answers it with an error the server never made, e.g. to play a server that does not
   * know an operation (see {@link RequestVerdict}). Bytes that are not ZooKeeper's framing (TLS,
   * four-letter words) pass untouched. Default: every request is forwarded, unparsed.
   */
  readonly onRequest?: RequestDecider;
}

/** Counters over the proxy's whole life (closed connections included). */
export interface ProxyStats {
  /** Connections accepted and forwarded. */
  readonly totalConnections: number;
  /** Forwarded connections not yet closed. */
  readonly activeConnections: number;
  /** Connections reset on arrival because of {@link FaultProxy.refuseNew}. */
  readonly refusedConnections: number;
  /** Bytes forwarded client → server. */
  readonly upstreamBytes: number;
  /** Bytes forwarded server → client. */
  readonly downstreamBytes: number;
  /** Client → server bytes black-holed. */
  readonly droppedUpstreamBytes: number;
  /** Server → client bytes black-holed. */
  readonly droppedDownstreamBytes: number;
}

/** Options for {@link FaultProxy.waitForBytes}. */
export interface WaitForBytesOptions {
  /** Bound for the wait. Default 5000 ms. */
  readonly timeoutMs?: number;
}

const DEFAULT_WAIT_TIMEOUT_MS = 5_000;
const CLOSE_TIMEOUT_MS = 5_000;

type Counters = Record<Direction, { forwarded: number; dropped: number }>;

/**
 * A TCP proxy on 127.0.0.1 for fault injection between a client and a server (pure Node.js).
 * Faults apply to current and future connections until {@link passThrough}:
 * - {@link blackhole}: bytes in a direction are silently dropped; sockets stay open, so the
 *   client sees a half-open connection (no FIN, no RST — like a network partition);
 * - {@link latency}: every chunk in a direction is delayed, order preserved;
 * - {@link resetAll}: every current connection is destroyed with a TCP RST on both sides;
 * - {@link refuseNew}: new connections are accepted by the kernel and reset at once, so clients
 *   see ECONNRESET (possibly right after 'connect'). The proxy keeps listening rather than
 *   closing its port, so the port cannot be taken by someone else and the switch is instant.
 *
 * To cut a connection at an exact moment, subscribe with {@link onChunk} (called when a chunk
 * has been handed to the kernel) and act on `event.connection` synchronously, or await
 * {@link waitForBytes}. Neither the listener nor its connections keep the process alive.
 */
export class FaultProxy {
  /** The proxy's own port on 127.0.0.1. */
  readonly port: number;
  readonly #server: Server;
  readonly #target: { readonly host: string; readonly port: number };
  readonly #rewriteUpstream: FaultProxyOptions['rewriteUpstream'];
  readonly #onRequest: FaultProxyOptions['onRequest'];
  readonly #connections = new Set<ProxyConnection>();
  readonly #listeners = new Set<(event: ProxyChunkEvent) => void>();
  readonly #blackholed: Record<Direction, boolean> = { upstream: false, downstream: false };
  readonly #latencyMs: Record<Direction, number> = { upstream: 0, downstream: 0 };
  readonly #counters: Counters = { upstream: { forwarded: 0, dropped: 0 }, downstream: { forwarded: 0, dropped: 0 } };
  #refusing = false;
  #nextId = 1;
  #totalConnections = 0;
  #refusedConnections = 0;

  private constructor(server: Server, port: number, options: FaultProxyOptions) {
    this.#server = server;
    this.port = port;
    this.#target = { host: options.targetHost ?? LOOPBACK, port: options.targetPort };
    this.#rewriteUpstream = options.rewriteUpstream;
    this.#onRequest = options.onRequest;
    server.on('connection', (socket: Socket) => this.#accept(socket));
  }

  /** Starts a proxy on a free 127.0.0.1 port forwarding to `targetHost:targetPort`. */
  static async start(options: FaultProxyOptions): Promise<FaultProxy> {
    // Half-open is a state we forward, not one Node should resolve for us by ending the socket.
    const server = createServer({ allowHalfOpen: true });
    server.unref();
    const port = await new Promise<number>((resolve, reject) => {
      server.once('error', (error) =>
        reject(new HarnessError('PORT_UNAVAILABLE', `FaultProxy cannot listen: ${error.message}`, {}, { cause: error })),
      );
      server.listen({ host: LOOPBACK, port: 0 }, () => {
        const address = server.address();
        resolve(address !== null && typeof address !== 'string' ? address.port : 0);
      });
    });
    return new FaultProxy(server, port, options);
  }

  /** `127.0.0.1:<port>`: give this to the client instead of the server's address. */
  get connectString(): string {
    return `${LOOPBACK}:${this.port}`;
  }

  /** The currently open connections, oldest first. */
  get connections(): readonly ProxyConnection[] {
    return [...this.#connections];
  }

  #accept(socket: Socket): void {
    socket.unref();
    if (this.#refusing) {
      this.#refusedConnections++;
      socket.on('error', () => undefined);
      socket.resetAndDestroy();
      return;
    }
    this.#totalConnections++;
    const connection = new ProxyConnection(this.#nextId++, socket, this.#target, {
      faults: (direction) => ({ blackholed: this.#blackholed[direction], latencyMs: this.#latencyMs[direction] }),
      report: (event) => this.#report(event),
      closed: (closed) => this.#connections.delete(closed),
      rewriteUpstream: this.#rewriteUpstream,
      onRequest: this.#onRequest,
    });
    this.#connections.add(connection);
  }

  #report(event: ProxyChunkEvent): void {
    const counters = this.#counters[event.direction];
    if (event.dropped) counters.dropped += event.chunk.length;
    else counters.forwarded += event.chunk.length;
    for (const listener of this.#listeners) listener(event);
  }

  /** Counters so far. */
  stats(): ProxyStats {
    return {
      totalConnections: this.#totalConnections,
      activeConnections: this.#connections.size,
      refusedConnections: this.#refusedConnections,
      upstreamBytes: this.#counters.upstream.forwarded,
      downstreamBytes: this.#counters.downstream.forwarded,
      droppedUpstreamBytes: this.#counters.upstream.dropped,
      droppedDownstreamBytes: this.#counters.downstream.dropped,
    };
  }

  /** Silently drops all bytes in `direction` (default both) on every connection, from now on. */
  blackhole(direction: DirectionSelector = 'both'): void {
    for (const d of directionsOf(direction)) this.#blackholed[d] = true;
  }

  /** Delays every chunk in `direction` by `ms` from now on (0 = none). */
  latency(direction: DirectionSelector, ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) {
      throw new HarnessError('INVALID_OPTIONS', `latency must be a non-negative number of ms, got ${ms}`, { option: 'latency', value: ms });
    }
    for (const d of directionsOf(direction)) this.#latencyMs[d] = ms;
  }

  /** Back to faithful forwarding: no black holes (proxy-wide), no latency, new connections accepted. */
  passThrough(): void {
    for (const d of DIRECTIONS) {
      this.#blackholed[d] = false;
      this.#latencyMs[d] = 0;
    }
    this.#refusing = false;
  }

  /** While `refuse` is true, new connections are reset on arrival (see the class notes). Current ones are untouched. */
  refuseNew(refuse = true): void {
    this.#refusing = refuse;
  }

  /** Destroys every current connection with a TCP RST on both sides. Returns how many there were. */
  resetAll(): number {
    const current = [...this.#connections];
    for (const connection of current) connection.reset();
    return current.length;
  }

  /**
   * Calls `listener` synchronously for every chunk forwarded (after it was handed to the
   * kernel) or black-holed, on every connection. Returns the unsubscribe function.
   */
  onChunk(listener: (event: ProxyChunkEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Resolves once at least `count` bytes in total were forwarded in `direction` (bounded). */
  async waitForBytes(direction: Direction, count: number, options: WaitForBytesOptions = {}): Promise<void> {
    if (this.#counters[direction].forwarded >= count) return;
    const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS;
    let unsubscribe = (): void => undefined;
    const reached = new Promise<void>((resolve) => {
      unsubscribe = this.onChunk(() => {
        if (this.#counters[direction].forwarded >= count) resolve();
      });
    });
    try {
      await withTimeout(
        reached,
        timeoutMs,
        () =>
          new HarnessError('WAIT_TIMEOUT', `${count} ${direction} bytes not forwarded within ${timeoutMs} ms`, {
            what: `${count} ${direction} bytes`,
            timeoutMs,
          }),
      );
    } finally {
      unsubscribe();
    }
  }

  /** Stops listening and closes every connection. */
  async close(): Promise<void> {
    for (const connection of this.#connections) connection.destroy();
    if (!this.#server.listening) return;
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    await withTimeout(
      closed,
      CLOSE_TIMEOUT_MS,
      () => new HarnessError('WAIT_TIMEOUT', `FaultProxy did not close within ${CLOSE_TIMEOUT_MS} ms`, { what: 'proxy close', timeoutMs: CLOSE_TIMEOUT_MS }),
    );
  }

  /** Same as {@link close}, for `await using`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
