import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { ProxyFlow } from './proxy-flow.js';
import type { Direction, DirectionSelector, FlowFaults } from './proxy-flow.js';
import { RequestFilter } from './request-filter.js';
import type { RequestVerdict } from './request-filter.js';

/** Reported for every chunk a {@link FaultProxy} forwarded (once handed to the kernel) or black-holed. */
export interface ProxyChunkEvent {
  readonly connection: ProxyConnection;
  readonly direction: Direction;
  readonly chunk: Buffer;
  /** True when the chunk was black-holed instead of forwarded. */
  readonly dropped: boolean;
  /** Bytes forwarded in `direction` on this connection so far, this chunk included. */
  readonly forwardedBytes: number;
}

/**
 * A client request seen by a {@link FaultProxy} with `onRequest`. The connect request is not one,
 * nor is a ping (-2) or an auth (-4): those are always forwarded, the decider is not asked (the
 * server answers auth out of order, so a reply could not be told to be the refused one's).
 * The watch re-registrations (setWatches 101, setWatches2 105) are, although they all share xid
 * -8: the server answers them in order with the rest, so the n-th reply of xid -8 is the n-th's.
 */
export interface ProxyRequest {
  readonly connection: ProxyConnection;
  /** The request's xid: 0 or more, or -8 for a watch re-registration (see above). */
  readonly xid: number;
  /** ZooKeeper's opcode: create 1, getData 4, multi 14, addWatch 106, ... */
  readonly opcode: number;
}

/** Decides each request's fate; called synchronously as the request passes. */
export type RequestDecider = (request: ProxyRequest) => RequestVerdict;

/** What a connection needs from its proxy. */
export interface ProxyConnectionHooks {
  /** The proxy-wide faults for `direction`; the connection adds its own black hole. */
  readonly faults: (direction: Direction) => FlowFaults;
  readonly report: (event: ProxyChunkEvent) => void;
  readonly closed: (connection: ProxyConnection) => void;
  /** Makes this connection's rewrite of client → server bytes, if the proxy has one. */
  readonly rewriteUpstream?: (() => (chunk: Buffer) => Buffer) | undefined;
  /** Decides the fate of each request on this connection, if the proxy has such a decider. */
  readonly onRequest?: RequestDecider | undefined;
}

/** Both directions, upstream first. */
export const DIRECTIONS: readonly Direction[] = ['upstream', 'downstream'];

/** The directions a selector stands for. */
export function directionsOf(selector: DirectionSelector): readonly Direction[] {
  return selector === 'both' ? DIRECTIONS : [selector];
}

/**
 * One client connection through a {@link FaultProxy} and its connection to the target, with
 * faults of its own on top of the proxy-wide ones. Created by the proxy.
 */
export class ProxyConnection {
  /** 1 for the proxy's first connection, then 2, ... */
  readonly id: number;
  readonly #client: Socket;
  readonly #server: Socket;
  readonly #flows: Readonly<Record<Direction, ProxyFlow>>;
  readonly #blackholed: Record<Direction, boolean> = { upstream: false, downstream: false };
  /** Until when (Date.now()) bytes are held back in each direction, see {@link holdUpstream}. */
  readonly #heldUntil: Record<Direction, number> = { upstream: 0, downstream: 0 };
  #openSockets = 2;

  /** @internal Connections are created by {@link FaultProxy}. */
  constructor(id: number, client: Socket, target: { readonly host: string; readonly port: number }, hooks: ProxyConnectionHooks) {
    this.id = id;
    this.#client = client;
    this.#server = connect({ host: target.host, port: target.port, allowHalfOpen: true });
    this.#server.unref();
    const filter = hooks.onRequest && new RequestFilter(this, hooks.onRequest);
    const flow = (direction: Direction, source: Socket, destination: Socket, makeRewrite?: () => (chunk: Buffer) => Buffer): ProxyFlow => {
      const result: ProxyFlow = new ProxyFlow(
        source,
        destination,
        () => {
          const shared = hooks.faults(direction);
          const held = this.#heldUntil[direction] - Date.now();
          return { blackholed: shared.blackholed || this.#blackholed[direction], latencyMs: Math.max(shared.latencyMs, held) };
        },
        ({ chunk, dropped }) => {
          hooks.report({ connection: this, direction, chunk, dropped, forwardedBytes: result.forwardedBytes });
          // A refused request's reply that closes the connection is out (or dropped): close it now, as the server would have.
          const closeAfter = direction === 'downstream' ? filter?.closeAfter : undefined;
          if (closeAfter !== undefined && result.forwardedBytes + result.droppedBytes >= closeAfter) this.destroy();
        },
        makeRewrite,
      );
      return result;
    };
    const { rewriteUpstream } = hooks;
    // The caller's rewrite first: the filter judges the requests as the server would get them.
    const upstream = filter
      ? () => {
          const rewrite = rewriteUpstream?.();
          return (chunk: Buffer) => filter.upstream(rewrite ? rewrite(chunk) : chunk);
        }
      : rewriteUpstream;
    this.#flows = {
      upstream: flow('upstream', this.#client, this.#server, upstream),
      downstream: flow('downstream', this.#server, this.#client, filter && (() => (chunk: Buffer) => filter.downstream(chunk))),
    };
    const watchClose = (socket: Socket, other: Socket, towardOther: ProxyFlow): void => {
      // Errors reach us as 'close' with hadError; without a listener they would crash the process.
      socket.on('error', () => undefined);
      socket.on('close', (hadError) => {
        // An abortive close (RST, refused connect) is passed on as one, unless that way is black-holed.
        if (hadError && !other.destroyed && !towardOther.blackholed) other.resetAndDestroy();
        if (--this.#openSockets === 0) {
          for (const direction of DIRECTIONS) this.#flows[direction].discard();
          hooks.closed(this);
        }
      });
    };
    watchClose(this.#client, this.#server, this.#flows.upstream);
    watchClose(this.#server, this.#client, this.#flows.downstream);
  }

  /** Bytes forwarded client → server on this connection. */
  get upstreamBytes(): number {
    return this.#flows.upstream.forwardedBytes;
  }

  /** Bytes forwarded server → client on this connection. */
  get downstreamBytes(): number {
    return this.#flows.downstream.forwardedBytes;
  }

  /** True once both sockets are closed. */
  get closed(): boolean {
    return this.#openSockets === 0;
  }

  /** Silently drops this connection's bytes in `direction` from now on; the sockets stay open. */
  blackhole(direction: DirectionSelector = 'both'): void {
    for (const d of directionsOf(direction)) this.#blackholed[d] = true;
  }

  /**
   * Holds back the client → server bytes that arrive from now for `ms` more (on top of the proxy's
   * latency, order kept): the request being filtered and those behind it reach the server late.
   */
  holdUpstream(ms: number): void {
    this.#heldUntil.upstream = Math.max(this.#heldUntil.upstream, Date.now() + ms);
  }

  /** The same for server → client bytes (from the chunk being filtered on). */
  holdDownstream(ms: number): void {
    this.#heldUntil.downstream = Math.max(this.#heldUntil.downstream, Date.now() + ms);
  }

  /** Ends this connection's own black holes (proxy-wide faults still apply). */
  passThrough(): void {
    for (const d of DIRECTIONS) this.#blackholed[d] = false;
  }

  /** Destroys both sockets with a TCP RST: the client sees ECONNRESET, as does the server. */
  reset(): void {
    this.#client.resetAndDestroy();
    this.#server.resetAndDestroy();
  }

  /** Closes both sockets normally (used when the proxy closes). */
  destroy(): void {
    this.#client.destroy();
    this.#server.destroy();
  }
}
