import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import type { DecodedFrame, WatchLists, ZooKeeperError } from '../../protocol/index.js';
import {
  EMPTY_PASSWORD,
  OpCode,
  Writer,
  Xid,
  writeRequestHeader,
} from '../../protocol/index.js';
import type { HostPort } from '../hosts/connect-string.js';
import { Backlog } from './backlog.js';
import type { Connection } from '../socket/connection.js';
import type { SessionToEnd } from './end-session.js';
import { Fifo } from '../fifo.js';
import { HostList } from '../hosts/host-list.js';
import { LivenessProof } from './liveness-proof.js';
import type { Packet } from './packet.js';
import { RequestQueue } from './request-queue.js';
import { PROBE_TIMEOUT_MS, ReadWriteSeeker, servesReadWrite } from '../hosts/rw-probe.js';
import type { DigestMd5Client, SaslOptions } from './sasl.js';
import type { TlsOptions } from '../socket/transport.js';

export type SessionState = 'connecting' | 'connected' | 'suspended' | 'expired' | 'closed';

/** Every state change is emitted as `state`, and also under its own name. */
export type SessionEvent = 'connecting' | 'connected' | 'reconnected' | 'suspended' | 'expired' | 'closed';

export interface SessionOptions {
  hosts: readonly HostPort[];
  /** Requested session timeout (ms); the server clamps it. */
  sessionTimeout: number;
  /** Bound on the wait for a connection of a request that has no timeout of its own. */
  requestTimeout: number;
  /** Requests written and not yet answered, at most; those after them wait in order. */
  maxInFlight: number;
  /** Requests waiting to be written, at most; one more fails at once with OVERLOADED. */
  maxQueued: number;
  /** Start a new session by itself after expiry. */
  renewExpiredSession: boolean;
  /** Accept read-only servers (a minority partition). */
  readOnly: boolean;
  tls?: TlsOptions | undefined;
  /** Longest request body sent (see ClientOptions.maxRequestBytes). */
  maxRequestBytes: number;
  /** Longest reply body read (see ClientOptions.maxReplyBytes). */
  maxReplyBytes: number;
  /** SASL credentials, authenticated on every connection before anything else is sent. */
  sasl?: SaslOptions | undefined;
}

export interface AuthEntry {
  scheme: string;
  auth: Buffer;
  waiters: { resolve: () => void; reject: (e: ZooKeeperError) => void }[];
}

/**
 * The state of a Session, shared by the parts it is made of (each a class of this chain: request
 * pipeline, auth, handshake, dial loop, then Session itself with replies, loss, expiry and close).
 * A part calls a later one only through the abstract methods at the end.
 */
export abstract class SessionCore extends EventEmitter {
  state: SessionState = 'connecting';
  sessionId = 0n;
  /** The timeout the server granted (ms); 0 before the first connection. */
  negotiatedTimeout = 0;
  lastZxid = 0n;
  readOnly = false;
  /** What the leader has provably heard from us (see liveness-proof.ts). */
  readonly liveness = new LivenessProof(
    () => this.negotiatedTimeout / 4 + 100,
    () => this.negotiatedTimeout,
  );

  protected password = EMPTY_PASSWORD;
  protected readonly hosts: HostList;
  protected connection: Connection | undefined;
  protected ready = false;
  /** Requests not yet written, in order: waiting for a connection, or for room under maxInFlight. */
  protected readonly pending = new RequestQueue((bytes) => this.connection?.send(bytes));
  /** Requests written and awaiting their replies, in order. */
  protected outstanding = new Fifo<Packet>();
  /** Every request is encoded here first, then its frame is copied into the queue. */
  protected readonly writer = new Writer(256);
  /** True while `writer` holds a frame being encoded (see request()). */
  protected encoding = false;
  protected pumpScheduled = false;
  protected readonly pumpTask = (): void => this.pump(true);
  /** When the session last had a usable connection (performance.now()); undefined while it has one. */
  protected disconnectedAt: number | undefined = performance.now();
  /** The one timer bounding the queued requests' wait for a connection (see enforceWaitBound). */
  protected waitTimer: NodeJS.Timeout | undefined;
  protected readonly waitTask = (): void => this.enforceWaitBound();
  /** Requests being failed, a slice per turn of the event loop: nothing is written meanwhile. */
  protected readonly backlog = new Backlog(() => this.schedulePump());
  /**
   * A reply settled a caller's promise in this turn of the event loop: the code awaiting it has
   * not run yet, so a watch event read now waits for the next turn (see onFrame).
   */
  protected repliesUnseen = false;
  protected readonly repliesSeen = (): void => {
    this.repliesUnseen = false;
  };
  protected pingsSentAt = new Fifo<number>();
  /**
   * The SASL exchange of the connection being opened: its token's xid, and what to do once the
   * server accepted it (see openSession). The server answers SASL at once, outside its request
   * pipeline, so nothing else is in flight meanwhile: its replies cannot be told from others'.
   */
  protected saslExchange: { mechanism: DigestMd5Client; xid: number; then: () => void } | undefined;
  protected readonly authInfo: AuthEntry[] = [];
  protected authInFlight = new Fifo<AuthEntry>();
  /**
   * Set on a handshake that sent credentials: the `connected`/`reconnected` event waits until the
   * server accepted them all, so that `connected` means "usable with the identities asked for"
   * (connect() relies on it), while requests already flow behind them.
   */
  protected announcement: { event: SessionEvent; authDue: number } | undefined;
  /** The session last announced `connected`: only its resumption is `reconnected`. */
  protected announced = 0n;
  /** Why the client ended by itself (the server refused its credentials); requests are refused with it. */
  protected endReason: ZooKeeperError | undefined;
  /** That end: the session ended on the server over a connection of its own. */
  protected authEnding: Promise<void> | undefined;
  protected target: HostPort | undefined;
  /**
   * The session was created by a read-only server: its id is local to that server (unknown to
   * the ensemble), so it is never offered to another server, which would report it expired; as
   * in Java (seenRwServerBefore), the next connection asks for a new session, and the first
   * read/write server creates the session proper. Such a session cannot expire: it is never
   * resumed, and it holds no ephemeral node (a read-only server refuses every write).
   */
  protected provisional = false;
  /** Probes for a read/write server while connected read-only; runs only while such a connection is up. */
  protected readonly seeker = new ReadWriteSeeker(
    (host, signal) => servesReadWrite(host, PROBE_TIMEOUT_MS, this.options.tls, signal),
    (host) => this.moveToReadWrite(host),
  );
  /** A read/write server the seeker found: the next connection goes there, and leaving the read-only one is no loss. */
  protected rwTarget: HostPort | undefined;
  protected watchProvider: (() => WatchLists) | undefined;
  protected xid = 0;
  protected closing: Promise<void> | undefined;
  protected expiryTimer: NodeJS.Timeout | undefined;
  protected wake: (() => void) | undefined;
  /** Aborted by close(): ends a connection attempt in progress at once. */
  protected readonly stopping = new AbortController();
  protected readonly pingFrame: Buffer;

  constructor(protected readonly options: SessionOptions) {
    super();
    this.hosts = new HostList(options.hosts);
    const ping = new Writer(16);
    writeRequestHeader(ping, Xid.ping, OpCode.ping);
    this.pingFrame = Buffer.from(ping.frame());
    void this.run();
  }

  /** The paths to re-register after a reconnect, as the server knows them (chroot included). */
  setWatchProvider(provider: () => WatchLists): void {
    this.watchProvider = provider;
  }

  /** Connected, and the server accepted the credentials sent with the handshake. */
  get isConnected(): boolean {
    return this.ready && this.state === 'connected';
  }

  /** Set when the client closed by itself: the server refused its credentials (AUTHFAILED). */
  get closeReason(): ZooKeeperError | undefined {
    return this.endReason;
  }

  /** True once no request can succeed any more: closed or closing, or expired without renewal. */
  get isStopped(): boolean {
    return this.isClosing || (this.state === 'expired' && !this.options.renewExpiredSession);
  }

  /** True from the moment close() is called, or the server refused the credentials. */
  get isClosing(): boolean {
    return this.closing !== undefined || this.endReason !== undefined || this.state === 'closed';
  }

  /** `host:port` of the server the session is connected to, if any. */
  get server(): string | undefined {
    return this.ready ? this.connection?.label : undefined;
  }

  protected abstract pump(batching?: boolean): void;
  protected abstract schedulePump(): void;
  protected abstract enforceWaitBound(): void;
  protected abstract announce(event: SessionEvent): void;
  protected abstract run(): Promise<void>;
  protected abstract connectTimeout(): number;
  protected abstract moveToReadWrite(host: HostPort): void;
  protected abstract sessionToEnd(): SessionToEnd | undefined;
  protected abstract endOnServer(session: SessionToEnd, deadline: number): Promise<void>;
  protected abstract onFrame(connection: Connection, frame: DecodedFrame): void;
  protected abstract onConnectionClosed(connection: Connection, reason: ZooKeeperError, established: boolean): void;
  protected abstract expire(reason: ZooKeeperError): void;
}
