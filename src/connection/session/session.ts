import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import type { DecodedFrame, WatchLists, WatcherEvent } from '../../protocol/index.js';
import {
  EMPTY_PASSWORD,
  OpCode,
  OversizedFrame,
  Reader,
  Writer,
  Xid,
  ZK_ERROR,
  ZooKeeperError,
  readConnectResponse,
  readReplyHeader,
  readWatcherEvent,
  writeAuth,
  writeConnectRequest,
  writeSaslRequest,
  writeRequestHeader,
  setWatchesOpCode,
  writeSetWatches,
  withoutStack,
} from '../../protocol/index.js';
import type { HostPort } from '../hosts/connect-string.js';
import { Backlog } from './backlog.js';
import { Connection } from '../socket/connection.js';
import type { SessionToEnd } from './end-session.js';
import { endSession, sendCloseSession } from './end-session.js';
import { Fifo } from '../fifo.js';
import { HostList } from '../hosts/host-list.js';
import type { AnswerKind } from './liveness-proof.js';
import { LivenessProof } from './liveness-proof.js';
import type { RequestSpec } from './packet.js';
import { Packet } from './packet.js';
import { RequestQueue } from './request-queue.js';
import { PROBE_TIMEOUT_MS, ReadWriteSeeker, servesReadWrite } from '../hosts/rw-probe.js';
import type { SaslOptions } from './sasl.js';
import { DigestMd5Client } from './sasl.js';
import type { TlsOptions } from '../socket/transport.js';
import { openSocket } from '../socket/transport.js';

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

interface AuthEntry {
  scheme: string;
  auth: Buffer;
  waiters: { resolve: () => void; reject: (e: ZooKeeperError) => void }[];
}

/**
 * setWatches batches stay near the Java client's 128 KiB of paths, and within maxRequestBytes
 * less the record's fixed part (request header 8, relative zxid 8, five vector lengths 20): a
 * server whose jute.maxbuffer is below the batch drops the connection, and the reconnect that
 * follows sends the same batch again.
 */
const SET_WATCHES_BATCH_BYTES = 128 * 1024;
const SET_WATCHES_FIXED_BYTES = 36;
const MAX_BACKOFF_MS = 1000;

/**
 * How long close() may spend ending the session on the server (the session timeout when that is
 * shorter: the server has expired it by then). A closeSession round trip, or a connection, a
 * handshake and one, take milliseconds on a working server; the bound is for one that does not
 * answer, where a process closing on its way out must not wait a whole session timeout.
 */
export const CLOSE_TIMEOUT_MS = 2000;

/**
 * A ZooKeeper session over a succession of connections: the handshake, reconnection to the next
 * host within the session, request pipelining with FIFO reply matching, pings, auth and watch
 * re-registration, expiry (reported by a server, or concluded locally when no server was reachable
 * for the whole session timeout) and an orderly close.
 */
export class Session extends EventEmitter {
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

  private password = EMPTY_PASSWORD;
  private readonly hosts: HostList;
  private connection: Connection | undefined;
  private ready = false;
  /** Requests not yet written, in order: waiting for a connection, or for room under maxInFlight. */
  private readonly pending = new RequestQueue((bytes) => this.connection?.send(bytes));
  /** Requests written and awaiting their replies, in order. */
  private outstanding = new Fifo<Packet>();
  /** Every request is encoded here first, then its frame is copied into the queue. */
  private readonly writer = new Writer(256);
  /** True while `writer` holds a frame being encoded (see request()). */
  private encoding = false;
  private pumpScheduled = false;
  private readonly pumpTask = (): void => this.pump();
  /** When the session last had a usable connection (performance.now()); undefined while it has one. */
  private disconnectedAt: number | undefined = performance.now();
  /** The one timer bounding the queued requests' wait for a connection (see enforceWaitBound). */
  private waitTimer: NodeJS.Timeout | undefined;
  private readonly waitTask = (): void => this.enforceWaitBound();
  /** Requests being failed, a slice per turn of the event loop: nothing is written meanwhile. */
  private readonly backlog = new Backlog(() => this.schedulePump());
  /**
   * A reply settled a caller's promise in this turn of the event loop: the code awaiting it has
   * not run yet, so a watch event read now waits for the next turn (see onFrame).
   */
  private repliesUnseen = false;
  private readonly repliesSeen = (): void => {
    this.repliesUnseen = false;
  };
  private pingsSentAt = new Fifo<number>();
  /**
   * The SASL exchange of the connection being opened: its token's xid, and what to do once the
   * server accepted it (see openSession). The server answers SASL at once, outside its request
   * pipeline, so nothing else is in flight meanwhile: its replies cannot be told from others'.
   */
  private saslExchange: { mechanism: DigestMd5Client; xid: number; then: () => void } | undefined;
  private readonly authInfo: AuthEntry[] = [];
  private authInFlight = new Fifo<AuthEntry>();
  /**
   * Set on a handshake that sent credentials: the `connected`/`reconnected` event waits until the
   * server accepted them all, so that `connected` means "usable with the identities asked for"
   * (connect() relies on it), while requests already flow behind them.
   */
  private announcement: { event: SessionEvent; authDue: number } | undefined;
  /** The session last announced `connected`: only its resumption is `reconnected`. */
  private announced = 0n;
  /** Why the client ended by itself (the server refused its credentials); requests are refused with it. */
  private endReason: ZooKeeperError | undefined;
  /** That end: the session ended on the server over a connection of its own. */
  private authEnding: Promise<void> | undefined;
  private target: HostPort | undefined;
  /**
   * The session was created by a read-only server: its id is local to that server (unknown to
   * the ensemble), so it is never offered to another server, which would report it expired; as
   * in Java (seenRwServerBefore), the next connection asks for a new session, and the first
   * read/write server creates the session proper. Such a session cannot expire: it is never
   * resumed, and it holds no ephemeral node (a read-only server refuses every write).
   */
  private provisional = false;
  /** Probes for a read/write server while connected read-only; runs only while such a connection is up. */
  private readonly seeker = new ReadWriteSeeker(
    (host, signal) => servesReadWrite(host, PROBE_TIMEOUT_MS, this.options.tls, signal),
    (host) => this.moveToReadWrite(host),
  );
  /** A read/write server the seeker found: the next connection goes there, and leaving the read-only one is no loss. */
  private rwTarget: HostPort | undefined;
  private watchProvider: (() => WatchLists) | undefined;
  private xid = 0;
  private closing: Promise<void> | undefined;
  private expiryTimer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;
  /** Aborted by close(): ends a connection attempt in progress at once. */
  private readonly stopping = new AbortController();
  private readonly pingFrame: Buffer;

  constructor(private readonly options: SessionOptions) {
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

  request<T>(spec: RequestSpec<T>): Promise<T> {
    const refused = this.refusal(spec) ?? this.overload(spec);
    if (refused) return Promise.reject(refused);
    // The frame is encoded now, not when it goes out: the caller's buffers may change meanwhile.
    // Encoding may run the caller's code (a getter on an ACL it passed), which may call the client
    // again: that nested request gets a writer of its own, or it would overwrite this frame.
    const nested = this.encoding;
    const w = nested ? new Writer(64) : this.writer;
    this.encoding = true;
    try {
      w.reset();
      writeRequestHeader(w, 0, spec.type);
      spec.write?.(w);
    } finally {
      this.encoding = nested;
    }
    const bytes = w.bodyLength;
    const limit = this.options.maxRequestBytes;
    if (bytes > limit) {
      w.take(); // lets go of the buffer grown for it
      return Promise.reject(
        new ZooKeeperError(
          'DATA_TOO_LARGE',
          `request of ${bytes} bytes exceeds maxRequestBytes (${limit}); a server drops the connection of a request longer than its jute.maxbuffer`,
          { op: spec.op, path: spec.path },
        ),
      );
    }
    return new Promise<T>((resolve, reject) => {
      this.pending.push(new Packet<T>(spec, resolve, reject) as Packet, w);
      if (this.ready) this.schedulePump();
      else if (this.waitTimer === undefined) this.enforceWaitBound();
    });
  }

  /**
   * OVERLOADED when `maxQueued` requests would still wait once the free in-flight slots are
   * filled: the caller learns at once that it outruns the server, instead of piling up requests
   * until the process runs out of memory (a million queued requests took 1.3 GB before).
   */
  private overload(spec: RequestSpec<unknown>): ZooKeeperError | undefined {
    const free = this.ready ? Math.max(0, this.options.maxInFlight - this.outstanding.length) : 0;
    const waiting = this.pending.held - free;
    if (waiting < this.options.maxQueued) return undefined;
    return withoutStack(
      () => new ZooKeeperError('OVERLOADED', `${waiting} requests already wait to be sent (maxQueued ${this.options.maxQueued})`, { op: spec.op, path: spec.path }),
    );
  }

  private refusal(spec: RequestSpec<unknown>): ZooKeeperError | undefined {
    const where = { op: spec.op, path: spec.path };
    if (this.endReason) return relocated(this.endReason, where);
    if (this.closing || this.state === 'closed') return new ZooKeeperError('CLOSED', 'client is closed', where);
    if (this.state === 'expired' && !this.options.renewExpiredSession) {
      return new ZooKeeperError('SESSIONEXPIRED', 'session expired', { ...where, zkCode: -112 });
    }
    if (spec.signal?.aborted) return new ZooKeeperError('ABORTED', 'request aborted', { ...where, cause: spec.signal.reason });
    return undefined;
  }

  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    queueMicrotask(this.pumpTask);
  }

  /**
   * Writes queued requests, in order, while fewer than maxInFlight await replies and the socket
   * takes more; called again by a reply, by the socket's 'drain' and by the end of a backlog. A
   * microtask after the requests of a tick, so that they go out in one write.
   */
  private pump(): void {
    this.pumpScheduled = false;
    const connection = this.connection;
    // Not during close() (what remains fails, unsent) nor while older requests are still being failed.
    if (!this.ready || !connection || this.closing || this.backlog.busy) return;
    const now = performance.now();
    while (this.outstanding.length < this.options.maxInFlight && connection.writable) {
      const packet = this.pending.takeNext(this.nextXid());
      if (!packet) break;
      this.markSent(packet, now);
    }
    this.pending.flush();
  }

  /** The xid the next request written gets (positive: the negative ones are the protocol's own). */
  private nextXid(): number {
    return this.xid >= 0x7fffffff ? 1 : this.xid + 1;
  }

  /** Counts `packet`, just written with the next xid, as in flight. */
  private markSent(packet: Packet, now: number): void {
    this.xid = this.nextXid();
    packet.xid = this.xid;
    packet.sentAt = now;
    if (packet.type === OpCode.sync) this.liveness.onSyncSent(now);
    this.outstanding.push(packet);
  }

  /**
   * Fails with TIMEOUT the queued requests that have waited for a connection for the request
   * timeout, counted from their call or from the loss of the connection, whichever came later;
   * then sets the one timer for the next of them. Requests with a timeout of their own are bound
   * by it instead. One timer for the whole queue instead of one per request: their deadlines
   * grow along the queue, so only the oldest one's needs a timer.
   */
  private enforceWaitBound(): void {
    clearTimeout(this.waitTimer);
    this.waitTimer = undefined;
    const since = this.disconnectedAt;
    if (this.ready || since === undefined) return;
    const limit = this.options.requestTimeout;
    const now = performance.now();
    const expired = new Fifo<Packet>();
    for (let packet = this.pending.nextWaitBounded(); packet; packet = this.pending.nextWaitBounded()) {
      const deadline = Math.max(packet.queuedAt, since) + limit;
      if (deadline > now) {
        this.waitTimer = setTimeout(this.waitTask, deadline - now);
        break;
      }
      expired.push(packet);
      this.pending.passWaitBounded();
    }
    this.backlog.fail(expired, (packet) =>
      withoutStack(() => new ZooKeeperError('TIMEOUT', `not sent: no connection within ${limit} ms`, { op: packet.op, path: packet.path })),
    );
  }

  /**
   * Digest or other auth; kept and re-sent on every reconnect. Resolves when a server accepted it.
   * A refusal (AUTHFAILED: the server closes the connection) ends the client, as in Java: see
   * failAuthentication.
   */
  addAuth(scheme: string, auth: Buffer): Promise<void> {
    const refused = this.refusal({ type: OpCode.auth, op: 'addAuth' });
    if (refused) return Promise.reject(refused);
    const entry: AuthEntry = { scheme, auth, waiters: [] };
    this.authInfo.push(entry);
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        entry.waiters = entry.waiters.filter((w) => w.resolve !== done);
        reject(new ZooKeeperError('TIMEOUT', `no server accepted the auth within ${this.options.requestTimeout} ms`, { op: 'addAuth' }));
      }, this.options.requestTimeout);
      const done = (): void => {
        clearTimeout(timer);
        resolve();
      };
      entry.waiters.push({
        resolve: done,
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      if (this.ready && this.connection) {
        // Requests made before addAuth run without the identity, as they would have on the wire:
        // what waits for the pump goes out first. (Beyond maxInFlight, or while the socket is
        // full, the rest still waits and runs with it: the ordering holds only up to there.)
        this.pump();
        this.sendAuth(this.connection, entry);
      }
    });
  }

  private sendAuth(connection: Connection, entry: AuthEntry): void {
    const w = new Writer(64);
    writeRequestHeader(w, Xid.auth, OpCode.auth);
    writeAuth(w, entry.scheme, entry.auth);
    this.authInFlight.push(entry);
    connection.send(w.frame());
  }

  private onAuthReply(err: number): void {
    const entry = this.authInFlight.shift();
    if (!entry) return;
    if (err !== 0) {
      this.failAuthentication(authRefusal(this.connection, entry.scheme, err));
      return;
    }
    const waiters = entry.waiters;
    entry.waiters = [];
    for (const w of waiters) w.resolve();
    if (this.announcement && --this.announcement.authDue === 0) this.announce(this.announcement.event);
  }

  /**
   * The server refused credentials: it answered AUTHFAILED and closes the connection, and every
   * server would refuse them again (an unknown scheme, a scheme that needs what this connection
   * lacks, such as x509 without a client certificate). Carrying on without the identity would run
   * requests as someone else, so the client ends, as Java's goes to AUTH_FAILED: every request
   * waiting or in flight fails with AUTHFAILED (one sent before the credentials may have run, as
   * after a CONNECTIONLOSS; one sent after them did not: the server reads nothing more), no
   * `suspended`, no reconnect; `authFailed`, then `closed` with the reason, are emitted at once,
   * so a lease learns it is lost before its node can go. Then the session is ended on the server
   * over a connection of its own (its ephemeral nodes go now, not a session timeout later);
   * close() resolves once that is done.
   */
  private failAuthentication(error: ZooKeeperError): void {
    if (this.endReason) return;
    this.endReason = error;
    this.authEnding = this.endAfterAuthFailure(error);
    // A close() under way (its closeSession went behind the credentials: the server never reads it)
    // finishes with this end instead of its own: see doClose.
    this.closing ??= this.authEnding;
  }

  private async endAfterAuthFailure(error: ZooKeeperError): Promise<void> {
    clearTimeout(this.expiryTimer);
    this.announcement = undefined;
    // Failed before the connection closes, which would fail them with CONNECTIONLOSS instead.
    this.failAll(error);
    this.rejectAuthWaiters(error);
    const session = this.sessionToEnd();
    const connection = this.connection;
    connection?.close(error);
    this.state = 'closed';
    this.emit('authFailed', error);
    this.emit('state', 'closed', error);
    this.emit('closed', error);
    await connection?.released;
    if (session) await this.endOnServer(session, performance.now() + this.connectTimeout());
  }

  /** The session as a handshake can take it over to end it; none for a provisional one (it holds no ephemeral node, and only its read-only server knows it). */
  private sessionToEnd(): SessionToEnd | undefined {
    if (this.sessionId === 0n || this.provisional) return undefined;
    return { id: this.sessionId, password: this.password, lastZxid: this.lastZxid, timeout: this.options.sessionTimeout };
  }

  /**
   * Ends `session` over a connection of its own (see endSession): the last server first, then
   * the others, each for at most a connect timeout, until one answers or `deadline` passes.
   */
  private async endOnServer(session: SessionToEnd, deadline: number): Promise<void> {
    // A session was established, so on some connection: this.target is set.
    const last = this.target!;
    for (const target of [last, ...this.hosts.others(last)]) {
      const left = Math.floor(deadline - performance.now());
      if (left < 1) return;
      const timeoutMs = Math.min(this.connectTimeout(), left);
      if (await endSession(target, session, { tls: this.options.tls, maxReplyBytes: this.options.maxReplyBytes, timeoutMs })) return;
    }
  }

  // ---- the connection loop ----

  private async run(): Promise<void> {
    let backoff = 50;
    while (!this.isStopped) {
      let established = false;
      const began = performance.now();
      try {
        const target = this.rwTarget ?? this.hosts.next();
        this.rwTarget = undefined;
        established = await this.connectOnce(target);
      } catch (error) {
        // Nothing may end this loop but close or a terminal expiry: a failure here would otherwise
        // be an unhandled rejection no caller can catch. Report it and try again after a back-off.
        this.emit('connectionError', error);
      }
      if (this.isStopped) return;
      // A connection that lasted is progress: after its loss, reconnect at once (so too when leaving
      // a read-only server for a read-write one). One dropped right after its handshake is not (a
      // server or proxy that accepts and then cuts every connection): reconnecting at once would
      // make a thousand connections a second, so it backs off.
      if (established && (performance.now() - began >= MAX_BACKOFF_MS || this.rwTarget)) {
        backoff = 50;
      } else if (established || this.hosts.endOfPass) {
        await this.sleep(backoff / 2 + Math.random() * (backoff / 2));
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /**
   * Bound on connecting and on the handshake. A share of the session timeout per host, as in the
   * Java client, but at most a third of it: an attempt whose bytes were lost must not use up the
   * whole session before the next one can start.
   */
  private connectTimeout(): number {
    const timeout = this.negotiatedTimeout || this.options.sessionTimeout;
    return Math.max(Math.min(timeout / this.hosts.size, timeout / 3), 250);
  }

  /** One connection attempt; resolves when that connection has ended, true if a session was established on it. */
  private async connectOnce(target: HostPort): Promise<boolean> {
    let socket;
    try {
      socket = await openSocket(target, this.connectTimeout(), this.options.tls, this.stopping.signal);
    } catch (error) {
      // Nothing is reported after close().
      if (!this.isStopped) this.emit('connectionError', error);
      return false;
    }
    if (this.isStopped) {
      socket.destroy();
      return false;
    }
    const requestedSession = this.sessionId;
    const offered = this.provisional ? 0n : this.sessionId;
    return new Promise<boolean>((resolve) => {
      let established = false;
      let closingStale = false;
      const connection = new Connection(
        socket,
        {
          onFrame: (frame) => {
            if (established) this.onFrame(connection, frame);
            else if (closingStale) connection.close(new ZooKeeperError('CONNECTIONLOSS', 'stale session closed', { zkCode: -4 }));
            else {
              const outcome = this.onHandshake(connection, frame, requestedSession, offered);
              established = outcome === 'ready';
              closingStale = outcome === 'closingStale';
            }
          },
          onIdle: () => this.sendPing(connection),
          onWritable: () => this.schedulePump(),
          onClose: (reason) => {
            this.onConnectionClosed(connection, reason, established);
            resolve(established);
          },
        },
        this.options.maxReplyBytes,
        `${target.host}:${target.port}`,
      );
      this.connection = connection;
      this.target = target;
      connection.setDeadline(this.connectTimeout(), 'session handshake');
      const w = new Writer(64);
      writeConnectRequest(w, {
        lastZxidSeen: this.lastZxid,
        timeout: this.options.sessionTimeout,
        sessionId: offered,
        password: offered === 0n ? EMPTY_PASSWORD : this.password,
        readOnly: this.options.readOnly,
      });
      connection.send(w.frame());
    });
  }

  /** Handles the ConnectResponse; true when the session is now usable on this connection. */
  private onHandshake(connection: Connection, frame: DecodedFrame, requestedSession: bigint, offered: bigint): 'ready' | 'closingStale' | 'failed' {
    if (frame instanceof OversizedFrame) throw new ZooKeeperError('PROTOCOL_ERROR', `handshake reply of ${frame.length} bytes (a real one has about 40)`);
    const refusal = frame.length === REPLY_HEADER_BYTES ? readReplyHeader(new Reader(frame)).err : 0;
    if (refusal !== 0) throw handshakeRefusal(connection, refusal);
    const response = readConnectResponse(new Reader(frame));
    if (requestedSession !== this.sessionId) {
      // We gave that session up (expired locally) while this handshake was on its way: taking it
      // back as a "new" session would revive its ephemeral nodes, which the recipes consider
      // gone. Close it on the server so they go at once, and start over with a fresh session.
      if (response.timeout > 0 && response.sessionId === requestedSession) {
        sendCloseSession(connection, this.connectTimeout());
        return 'closingStale';
      }
      connection.close(new ZooKeeperError('CONNECTIONLOSS', 'handshake for a session given up meanwhile', { zkCode: -4 }));
      return 'failed';
    }
    if (response.timeout <= 0) {
      this.expire(new ZooKeeperError('SESSIONEXPIRED', `server ${connection.label} reports the session expired`, { zkCode: -112 }));
      connection.close(new ZooKeeperError('CONNECTIONLOSS', 'session expired', { zkCode: -4 }));
      return 'failed';
    }
    const resumed = offered !== 0n && response.sessionId === offered;
    // Only a session the application was told about is "reconnected" (one whose first handshake
    // lost its connection before the credentials were answered never was). A new session that
    // replaces a provisional one is `connected`, never `expired`: nothing of it is lost.
    const event = resumed && offered === this.announced ? 'reconnected' : 'connected';
    // The application's watches outlive a provisional session (as in Java, which re-sends them whatever the session).
    const keepsWatches = resumed || this.provisional;
    this.provisional = response.readOnly && !resumed;
    this.sessionId = response.sessionId;
    this.password = response.password;
    this.negotiatedTimeout = response.timeout;
    this.readOnly = response.readOnly;
    this.liveness.onHandshake(connection.lastSentAt, performance.now(), response.readOnly);
    clearTimeout(this.expiryTimer);
    connection.startLivenessClock(response.timeout);
    const open = (): void => this.openSession(connection, event, keepsWatches);
    // As in Java, SASL goes first, alone (requests, auth and watches wait until it is done), on every connection.
    if (this.options.sasl) this.startSasl(connection, this.options.sasl, open);
    else open();
    return 'ready';
  }

  /** Sends what goes before the queued requests, then lets them go. */
  private openSession(connection: Connection, event: SessionEvent, keepsWatches: boolean): void {
    // Auth and watches go before anything queued, so queued requests run with the session's identity and watches.
    for (const entry of this.authInfo) this.sendAuth(connection, entry);
    if (keepsWatches) this.sendSetWatches(connection);
    this.ready = true;
    this.disconnectedAt = undefined;
    clearTimeout(this.waitTimer);
    this.waitTimer = undefined;
    this.pump();
    if (this.authInfo.length === 0) this.announce(event);
    else this.announcement = { event, authDue: this.authInfo.length };
  }

  private startSasl(connection: Connection, options: SaslOptions, then: () => void): void {
    const mechanism = new DigestMd5Client(options);
    this.saslExchange = { mechanism, xid: 0, then };
    this.sendSasl(connection, mechanism.start());
  }

  private sendSasl(connection: Connection, token: Buffer): void {
    this.xid = this.nextXid();
    this.saslExchange!.xid = this.xid;
    const w = new Writer(token.length + 32);
    writeRequestHeader(w, this.xid, OpCode.sasl);
    writeSaslRequest(w, token);
    connection.send(w.frame());
  }

  /**
   * The server's answer to a SASL token (SetSASLResponse). A refusal (AUTHFAILED, or
   * SESSIONCLOSEDREQUIRESASLAUTH from a server that requires SASL) comes with the connection's
   * close, and ends the client as a refused addAuth does; so does a server that fails our check of it.
   */
  private onSaslReply(connection: Connection, err: number, r: Reader): void {
    const exchange = this.saslExchange!;
    if (err !== 0) {
      this.saslExchange = undefined;
      this.failAuthentication(authRefusal(connection, 'sasl', err));
      return;
    }
    let next: Buffer | undefined;
    try {
      next = exchange.mechanism.step(r.buffer());
    } catch (error) {
      this.saslExchange = undefined;
      if (!(error instanceof ZooKeeperError)) throw error;
      this.failAuthentication(new ZooKeeperError(error.code, `server ${connection.label}: ${error.detail}; the client is closed`, { zkCode: error.zkCode, op: 'sasl' }));
      return;
    }
    if (next) {
      this.sendSasl(connection, next);
      return;
    }
    this.saslExchange = undefined;
    exchange.then();
  }

  private announce(event: SessionEvent): void {
    this.announcement = undefined;
    this.announced = this.sessionId;
    this.setState('connected', event);
    if (this.readOnly && this.connection && this.target) this.seeker.start(this.hosts.others(this.target));
  }

  /**
   * A new server list (the ensemble's membership changed): the session goes on, and leaves its
   * server when HostList.update says so, to spread the load as Java's client does; requests
   * in flight on that connection fail with CONNECTIONLOSS, as on any connection loss.
   */
  updateHosts(hosts: readonly HostPort[]): void {
    const connection = this.connection;
    const move = this.hosts.update(hosts, this.ready ? this.target : undefined);
    if (!move || !connection || !this.ready || this.isStopped) return;
    connection.close(new ZooKeeperError('CONNECTIONLOSS', `leaving ${connection.label}: the server list changed (updateServerAddresses)`, { zkCode: -4 }));
  }

  /**
   * The seeker found a read/write server: leave the read-only one for it (as Java's
   * pingRwServer does). A planned move, so `connecting` rather than `suspended`; requests not
   * answered on the read-only connection fail with CONNECTIONLOSS, those made meanwhile wait.
   */
  private moveToReadWrite(host: HostPort): void {
    const connection = this.connection;
    if (!connection || !this.ready || !this.readOnly || this.isStopped) return;
    this.rwTarget = host;
    connection.close(
      new ZooKeeperError('CONNECTIONLOSS', `leaving read-only server ${connection.label} for read/write server ${host.host}:${host.port}`, { zkCode: -4 }),
    );
  }

  private sendSetWatches(connection: Connection): void {
    const lists = this.watchProvider?.();
    if (!lists) return;
    const kinds = ['data', 'exist', 'child', 'persistent', 'persistentRecursive'] as const;
    const budget = Math.min(SET_WATCHES_BATCH_BYTES, this.options.maxRequestBytes - SET_WATCHES_FIXED_BYTES);
    let batch = emptyLists();
    let bytes = 0;
    const flush = (): void => {
      const w = new Writer(bytes + 128);
      writeRequestHeader(w, Xid.setWatches, setWatchesOpCode(batch));
      writeSetWatches(w, this.lastZxid, batch);
      connection.send(w.frame());
      batch = emptyLists();
      bytes = 0;
    };
    for (const kind of kinds) {
      for (const path of lists[kind]) {
        const size = Buffer.byteLength(path) + 4;
        if (bytes > 0 && bytes + size > budget) flush();
        batch[kind].push(path);
        bytes += size;
      }
    }
    if (bytes > 0) flush();
  }

  private sendPing(connection: Connection): void {
    if (!this.ready) return;
    this.pingsSentAt.push(performance.now());
    connection.send(this.pingFrame);
  }

  /**
   * A reply over maxReplyBytes brings only its header, which is all that matching it, the zxid
   * and the liveness proof need: only its own request fails, the connection goes on.
   */
  private onFrame(connection: Connection, frame: DecodedFrame): void {
    const r = new Reader(frame instanceof OversizedFrame ? frame.head : frame);
    const header = readReplyHeader(r);
    if (header.xid === Xid.notification) {
      // Watchers are called now, replies reach their callers through promises, a microtask or
      // more later (as many as the await chain has links). A watch event read behind a reply
      // waits until the event loop has turned, when the code awaiting that reply has run: else
      // `await getData(p, { watch }); dirty = false` runs after the watcher it set, and loses the
      // change. So does one read while older requests are still being failed. The frames behind
      // it wait too, so that no later reply overtakes it.
      if (this.repliesUnseen || this.backlog.busy) {
        connection.deferFrame();
        return;
      }
      // Only once handled: a zxid passed to setWatches tells the server what not to fire again.
      if (header.zxid > this.lastZxid) this.lastZxid = header.zxid;
      this.emit('notification', readWatcherEvent(r) satisfies WatcherEvent);
      return;
    }
    if (header.zxid > this.lastZxid) this.lastZxid = header.zxid;
    if (this.saslExchange && header.xid === this.saslExchange.xid) {
      this.onSaslReply(connection, header.err, r);
      return;
    }
    // A server that requires SASL (sessionRequireClientSASLAuth) answers this to whatever a client
    // that did not authenticate asks (a ping included), and closes the connection: every server
    // of the ensemble would do so again, so the client ends, as for refused credentials.
    if (header.err === ZK_ERROR.SESSIONCLOSEDREQUIRESASLAUTH) {
      this.failAuthentication(authRefusal(connection, 'sasl', header.err, 'requires SASL authentication of every client'));
      return;
    }
    switch (header.xid) {
      case Xid.ping: {
        const sentAt = this.pingsSentAt.shift();
        if (sentAt !== undefined) this.liveness.onAnswer(sentAt, performance.now(), 'plain');
        return;
      }
      case Xid.auth:
        this.onAuthReply(header.err);
        return;
      case Xid.setWatches:
        if (header.err !== 0) this.emit('connectionError', ZooKeeperError.fromServer(header.err, 'setWatches'));
        return;
    }
    const packet = this.outstanding.peek();
    if (!packet || packet.xid !== header.xid) {
      throw new ZooKeeperError('PROTOCOL_ERROR', `reply xid ${header.xid} does not match the oldest request (${packet?.xid ?? 'none'})`);
    }
    this.outstanding.shift();
    if (this.pending.waiting > 0) this.schedulePump();
    this.liveness.onAnswer(packet.sentAt!, performance.now(), answerKind(packet.type, header.err));
    if (packet.settled) return;
    if (!this.repliesUnseen) {
      this.repliesUnseen = true;
      setImmediate(this.repliesSeen);
    }
    packet.onReply?.(header.err, header.xid);
    if (header.err === ZK_ERROR.UNKNOWNSESSION && !this.isClosing) {
      // The server no longer knows our session (another connection closed it, and this request
      // came after): it is over, as when a handshake reports it expired. Every request fails
      // with SESSIONEXPIRED, not a code nobody handles, and a new session is made when renewed.
      const reason = new ZooKeeperError('SESSIONEXPIRED', `server ${connection.label} no longer knows the session`, { zkCode: header.err });
      packet.fail(relocated(reason, { op: packet.op, path: packet.path }));
      this.expire(reason);
      connection.close(new ZooKeeperError('CONNECTIONLOSS', 'session expired', { zkCode: -4 }));
      return;
    }
    if (header.err !== 0) {
      // exists' NONODE is its answer for a missing node (with the watch set, as for any answer), not a failure: no error is built for it.
      if (header.err === ZK_ERROR.NONODE && packet.type === OpCode.exists) packet.succeed(null);
      else packet.fail(ZooKeeperError.fromServer(header.err, packet.op, packet.path));
      return;
    }
    if (frame instanceof OversizedFrame) {
      packet.fail(
        new ZooKeeperError(
          'REPLY_TOO_LARGE',
          `reply of ${frame.length} bytes exceeds maxReplyBytes (${this.options.maxReplyBytes}); the server ran the request (and set any watch it asked for) but its result was skipped: raise the client option maxReplyBytes to read it`,
          { op: packet.op, path: packet.path },
        ),
      );
      return;
    }
    try {
      packet.succeed(packet.read ? packet.read(r) : undefined);
    } catch (error) {
      packet.fail(error);
      throw error;
    }
  }

  private onConnectionClosed(connection: Connection, reason: ZooKeeperError, established: boolean): void {
    if (this.connection === connection) {
      this.connection = undefined;
      this.ready = false;
    }
    this.disconnectedAt ??= performance.now();
    this.pingsSentAt = new Fifo();
    this.authInFlight = new Fifo();
    this.saslExchange = undefined;
    this.announcement = undefined;
    this.seeker.stop();
    this.liveness.onConnectionLost();
    // Everything asked before the loss of a session's connection and not answered fails, as in
    // Java: those in flight (their outcome unknown), and those still waiting to be written behind
    // them (not run). Only what is asked from now on waits for the next connection: what ran is a
    // prefix of what was asked, never a prefix and then a tail the next connection ran.
    // Requests asked while no connection was up wait through failed attempts (nothing was written).
    const lost = this.outstanding;
    this.outstanding = new Fifo();
    this.backlog.fail(lost, connectionLoss(reason, 'the outcome of the request is unknown'));
    if (established) this.backlog.fail(this.pending.takeAll(), connectionLoss(reason, 'the request was not sent'));
    if (this.isStopped) return;
    if (this.waitTimer === undefined) this.enforceWaitBound();
    // A planned move only for a provisional session: one a read-only server resumed (3.8's refuses
    // to, ReadOnlyZooKeeperServer.validateSession) is a real one, and its loss is a suspension with
    // the expiry clock running, whichever server comes next.
    if (this.rwTarget && this.provisional) {
      if (established && this.state === 'connected') this.setState('connecting', 'connecting', reason);
      return;
    }
    this.emit('connectionError', reason);
    if (established && this.state === 'connected') this.setState('suspended', 'suspended', reason);
    // Also when a handshake made while suspended lost its connection before its credentials were
    // answered: the handshake cleared the timer. Not for a provisional session: nothing to expire.
    if (established && this.state === 'suspended' && !this.provisional) {
      // With no server reachable for a whole session timeout, the session is gone (or will be before we can reach a server).
      this.expiryTimer = setTimeout(
        () =>
          this.expire(
            new ZooKeeperError('SESSIONEXPIRED', `no server reachable for the session timeout (${this.negotiatedTimeout} ms)`, {
              zkCode: -112,
            }),
          ),
        this.negotiatedTimeout,
      );
    }
  }

  private expire(reason: ZooKeeperError): void {
    clearTimeout(this.expiryTimer);
    this.sessionId = 0n;
    this.password = EMPTY_PASSWORD;
    this.failAll(reason);
    // No session will come to accept them: they would wait out their timeout for nothing.
    if (!this.options.renewExpiredSession) this.rejectAuthWaiters(reason);
    this.setState('expired', 'expired', reason);
    if (!this.options.renewExpiredSession) this.connection?.close(reason);
  }

  private rejectAuthWaiters(reason: ZooKeeperError): void {
    for (const entry of this.authInfo) {
      for (const w of entry.waiters) w.reject(relocated(reason, { op: 'addAuth' }));
      entry.waiters = [];
    }
  }

  /** Fails every request, in flight or queued, with an error like `reason` naming its own op and path. */
  private failAll(reason: ZooKeeperError): void {
    // Nothing is left for the wait bound: its timer must not keep the process alive.
    clearTimeout(this.waitTimer);
    this.waitTimer = undefined;
    const inFlight = this.outstanding;
    this.outstanding = new Fifo();
    const error = (packet: Packet): ZooKeeperError =>
      withoutStack(() => relocated(reason, { op: packet.op, path: packet.path }));
    this.backlog.fail(inFlight, error);
    this.backlog.fail(this.pending.takeAll(), error);
  }

  private setState(state: SessionState, event: SessionEvent, reason?: ZooKeeperError): void {
    this.state = state;
    this.emit('state', event, reason);
    this.emit(event, reason);
  }

  /**
   * Ends the session on the server (its ephemeral nodes go at once), then drops the connection.
   * Requests still waiting fail with CLOSED. Leaves no timer or socket behind. Without a working
   * connection (a brief disconnect; or the closeSession sent went unanswered within half the
   * bound) the session is ended over a connection of its own, the last server first, then the others, each for at most a
   * connect timeout; all of it within CLOSE_TIMEOUT_MS. When none answers, close() resolves all
   * the same and the ephemeral nodes stay until the server expires the session.
   */
  close(): Promise<void> {
    this.closing ??= this.doClose();
    return this.closing;
  }

  private async doClose(): Promise<void> {
    if (this.state === 'closed') return;
    const closeTimeout = Math.min(this.negotiatedTimeout || this.options.sessionTimeout, CLOSE_TIMEOUT_MS);
    const deadline = performance.now() + closeTimeout;
    let ended = false;
    if (this.ready && this.connection && this.sessionId !== 0n) {
      const connection = this.connection;
      // What was asked before close() goes out first, as far as maxInFlight lets it: the rest
      // fails below with CLOSED, unsent, after the replies to what went out (in order).
      this.pump();
      const w = new Writer(16);
      writeRequestHeader(w, 0, OpCode.closeSession);
      const frame = w.frame();
      // Half the bound: a connection can look up and be silent (a half-open one, its read
      // deadline still ahead). Waiting out the whole bound on it left no time for a connection
      // of our own, and the session's nodes stayed although the server was there to end it.
      const answerWithin = closeTimeout / 2;
      ended = await new Promise<boolean>((resolve) => {
        frame.writeInt32BE(this.nextXid(), 4);
        const packet = new Packet<void>({ type: OpCode.closeSession, op: 'close', timeout: answerWithin }, () => resolve(true), () => resolve(false));
        this.markSent(packet as Packet, performance.now());
        connection.send(frame);
      });
    }
    // The server refused credentials meanwhile: the client has ended (closed emitted, with the reason) or is ending.
    if (this.authEnding) return this.authEnding;
    const unended = ended ? undefined : this.sessionToEnd();
    clearTimeout(this.expiryTimer);
    this.state = 'closed';
    this.stopping.abort();
    this.wake?.();
    const connection = this.connection;
    const closed = new ZooKeeperError('CLOSED', 'client closed');
    connection?.close(closed);
    this.failAll(closed);
    this.rejectAuthWaiters(new ZooKeeperError('CLOSED', 'client closed', { op: 'addAuth' }));
    await connection?.released;
    if (unended) await this.endOnServer(unended, deadline);
    await this.backlog.idle();
    this.emit('state', 'closed');
    this.emit('closed');
  }
}

/** A reply header (xid, zxid, err): shorter than any ConnectResponse (at least 20 bytes). */
const REPLY_HEADER_BYTES = 16;

/**
 * A server that will not create or resume our session may answer the handshake with a bare reply
 * header: a 3.8 read-only server does so (NOTREADONLY) unless `localSessionsEnabled=true`, the only
 * kind of session it can create. Reported as that code, and the next host is tried.
 */
function handshakeRefusal(connection: Connection, err: number): ZooKeeperError {
  const { code } = ZooKeeperError.fromServer(err);
  const why = code === 'NOTREADONLY' ? 'a read-only server creates sessions only with localSessionsEnabled=true' : 'it answered the handshake with an error';
  return new ZooKeeperError(code, `server ${connection.label} refused to start a session: ${why}`, { zkCode: err, op: 'connect' });
}

/** The server refused credentials for `scheme` with `err`, and closes the connection. */
function authRefusal(connection: Connection | undefined, scheme: string, err: number, why = `refused the credentials for scheme "${scheme}"`): ZooKeeperError {
  const server = connection ? `server ${connection.label}` : 'the server';
  return new ZooKeeperError(ZooKeeperError.fromServer(err).code, `${server} ${why} and closed the connection; the client is closed`, {
    zkCode: err,
    op: scheme === 'sasl' ? 'sasl' : 'addAuth',
  });
}

/** Writes the leader runs only for a live session, and whose reply header tells whether they ran (not multi's). */
const SESSION_CHECKED_WRITES: ReadonlySet<number> = new Set([
  OpCode.create,
  OpCode.create2,
  OpCode.createTTL,
  OpCode.createContainer,
  OpCode.delete,
  OpCode.setData,
  OpCode.setACL,
]);

function answerKind(type: number, err: number): AnswerKind {
  if (type === OpCode.sync) return err === 0 ? 'sync' : 'failedSync';
  return err === 0 && SESSION_CHECKED_WRITES.has(type) ? 'write' : 'plain';
}

function emptyLists(): { [K in keyof WatchLists]: string[] } {
  return { data: [], exist: [], child: [], persistent: [], persistentRecursive: [] };
}

/** The CONNECTIONLOSS of a request the loss `reason` ended, saying what became of it. */
function connectionLoss(reason: ZooKeeperError, outcome: string): (packet: Packet) => ZooKeeperError {
  // The detail, not the message: the new error adds its own code and op/path around it.
  const message = `${reason.detail}; ${outcome}`;
  return (packet) => withoutStack(() => new ZooKeeperError('CONNECTIONLOSS', message, { zkCode: -4, op: packet.op, path: packet.path, cause: reason }));
}

/** An error like `reason` (its code and words, it as the cause) told of another request. */
function relocated(reason: ZooKeeperError, where: { op: string; path?: string }): ZooKeeperError {
  return new ZooKeeperError(reason.code, reason.detail, { ...where, zkCode: reason.zkCode, cause: reason });
}
