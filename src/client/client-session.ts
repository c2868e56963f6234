import { EventEmitter } from 'node:events';
import type { RequestSpec, SessionEvent } from '../connection/index.js';
import { Session, checkSaslOptions, parseConnectString } from '../connection/index.js';
import type { Reader, WatcherEvent } from '../protocol/index.js';
import { DEFAULT_MAX_REPLY_BYTES, DEFAULT_MAX_REQUEST_BYTES, ZooKeeperError, readStat } from '../protocol/index.js';
import type { AclProvider } from './acl.js';
import { OPEN_ACL_UNSAFE } from './acl.js';
import { callListener } from './state/call-listener.js';
import type { ClientEvents } from './state/client-events.js';
import { DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_SESSION_TIMEOUT_MS, checkDuration } from './durations.js';
import {
  hexId,
  sessionChannel,
  traceRequest,
  requestChannel,
  watchChannel,
} from './diagnostics.js';
import type { SessionMessage, WatchMessage } from './diagnostics.js';
import { DEFAULT_MAX_IN_FLIGHT, DEFAULT_MAX_QUEUED, checkLimit } from './limits.js';
import { checkFrameLimit } from './frame-limits.js';
import { Chroot, validatePath } from './paths.js';
import type { StateChange } from './state/state-changes.js';
import { StateChanges } from './state/state-changes.js';
import type { StateListener } from './state/state-listeners.js';
import { StateListeners } from './state/state-listeners.js';
import { ConfigWatchers } from './watches/config-watch.js';
import { followConfig } from './follow-config.js';
import type { Where } from './validate.js';
import {
  checkAcl,
  checkBoolean,
  checkBounds,
  checkCredential,
  checkCredentials,
  checkFunction,
  checkOptions,
  invalidArgument,
} from './validate.js';
import { WatchManager } from './watches/watch-manager.js';
import type {
  CallOptions,
  ClientOptions,
  ClientState,
  DataResult,
  WaitForConnectedOptions,
  WatchOptions,
} from './client-options.js';

export const EMPTY = Buffer.alloc(0);

/**
 * The session side of a ZooKeeperClient: its options, the Session it runs and the translation of
 * the session's events into the client's, its state, waits and close, and the request path every
 * call goes through. The calls are the subclasses' (watched-requests.ts, client.ts).
 */
export abstract class ClientSession extends EventEmitter<ClientEvents> {
  private readonly session: Session;
  protected readonly chrootMap: Chroot;
  protected readonly watches: WatchManager;

  /** The part that reads the config (watched-requests.ts) answers for followConfig. */
  abstract getConfig(options?: WatchOptions): Promise<DataResult>;
  protected readonly configWatchers = new ConfigWatchers();
  private readonly stateListeners = new StateListeners();
  /** The last connection failure since the session was last connected: why a wait for it timed out. */
  private lastFailure: Error | undefined;
  /** The session id as of the last state change but expiry: what an `expired` event names. */
  private lastSessionId = 0n;
  private readonly requestTimeout: number;
  protected readonly defaultAcl: AclProvider;

  constructor(connectString: string, options?: ClientOptions) {
    super();
    const where = { op: 'connect' };
    options = checkOptions(options, where);
    const credentials = checkCredentials(options.auth, where);
    if (typeof connectString !== 'string') invalidArgument('connectString', 'a string "host:port,...[/chroot]"', connectString, where);
    const { hosts, chroot } = parseConnectString(connectString);
    if (chroot) validatePath(chroot, 'connect');
    this.chrootMap = new Chroot(chroot);
    this.watches = new WatchManager(this.chrootMap);
    // A list is checked now; a function's answers as each create asks (aclFor).
    this.defaultAcl = typeof options.defaultAcl === 'function' ? options.defaultAcl : options.defaultAcl === undefined ? OPEN_ACL_UNSAFE : checkAcl(options.defaultAcl, where, 'defaultAcl');
    this.requestTimeout = checkDuration(options.requestTimeout ?? DEFAULT_REQUEST_TIMEOUT_MS, 'requestTimeout');
    const sessionTimeout = checkDuration(options.sessionTimeout ?? DEFAULT_SESSION_TIMEOUT_MS, 'sessionTimeout');
    const follow = checkBoolean(options.followConfig, 'followConfig', where);
    // A dynamic config names each member's plain client address only (secureClientPort is never in
    // it): a TLS client following it would be sent to ports where every handshake fails, and would
    // lose its session with no connection left to read a later config on. Refused, not guessed.
    if (follow && options.tls !== undefined && options.tls !== false) {
      invalidArgument('followConfig', 'false with tls (the ensemble config holds no secure client port; call updateServerAddresses with the secure addresses)', options.followConfig, where);
    }
    this.session = new Session({
      hosts,
      sessionTimeout,
      requestTimeout: this.requestTimeout,
      renewExpiredSession: checkBoolean(options.renewExpiredSession, 'renewExpiredSession', where) ?? true,
      readOnly: checkBoolean(options.readOnly, 'readOnly', where) ?? false,
      // Checked: anything else spread into tls.connect as no option at all, a TLS connection with Node's defaults.
      tls: options.tls === true ? {} : options.tls === false || options.tls === undefined ? undefined : checkOptions(options.tls, where, 'tls'),
      maxInFlight: checkLimit(options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT, 'maxInFlight', 1),
      maxQueued: checkLimit(options.maxQueued ?? DEFAULT_MAX_QUEUED, 'maxQueued', 0),
      maxRequestBytes: checkFrameLimit(options.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES, 'maxRequestBytes'),
      maxReplyBytes: checkFrameLimit(options.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES, 'maxReplyBytes'),
      sasl: options.sasl === undefined ? undefined : checkSaslOptions(options.sasl),
    });
    this.session.setWatchProvider(() => this.configWatchers.withRegistration(this.watches.registrations()));
    this.session.on('notification', (raw: WatcherEvent) => {
      this.configWatchers.dispatch(raw);
      const event = this.watches.decode(raw);
      if (!event) return;
      if (watchChannel.hasSubscribers) watchChannel.publish({ ...event, sessionId: hexId(this.sessionId) } satisfies WatchMessage);
      this.watches.dispatch(raw, event);
    });
    this.session.on('state', (event: SessionEvent, reason?: ZooKeeperError) => {
      if (event === 'expired' || event === 'closed') {
        this.watches.endAll(event);
        this.configWatchers.endAll(event);
      }
      // `connecting`: a planned move from a read-only server, whose new session re-registers the watches too.
      if (event === 'suspended' || event === 'connecting') this.watches.connectionChanged('disconnected');
      if (event === 'reconnected' || event === 'connected') this.watches.connectionChanged('reconnected');
      if (event === 'connected' || event === 'reconnected') this.lastFailure = undefined;
      // The session forgets its id before it says expired: the event names the session that ended.
      if (event !== 'expired') this.lastSessionId = this.sessionId;
      if (sessionChannel.hasSubscribers) {
        sessionChannel.publish({ event, sessionId: hexId(this.lastSessionId), server: this.server, reasonCode: reason?.code } satisfies SessionMessage);
      }
      this.stateListeners.dispatch(event, reason);
      this.notify('state', event, reason);
      // The session gives a reason with these two always, with closed when it closed by itself, and with no other.
      if (event === 'suspended' || event === 'expired') this.notify(event, reason!);
      else if (event === 'closed') this.notify(event, reason);
      else this.notify(event);
    });
    this.session.on('connectionError', (reason: unknown) => {
      // Whatever the connection loop caught: an Error but for a throw of something else.
      this.lastFailure = reason instanceof Error ? reason : new Error(String(reason));
      this.notify('connectionError', this.lastFailure);
    });
    this.session.on('authFailed', (reason: ZooKeeperError) => {
      this.lastFailure = reason;
      this.notify('authFailed', reason);
    });
    // Checked above: a credential refused here would be swallowed, and the client run as someone else.
    for (const { scheme, auth } of credentials) void this.addAuth(scheme, auth).catch(() => undefined);
    if (follow) followConfig(this);
  }

  /**
   * Replaces the servers the client connects to, keeping the session (Java's
   * `updateServerAddresses`): when its server is not in the new list the client moves; when the
   * list grew it moves to a new server with probability 1 − old size / new size, so that clients
   * spread over the new members (a move is a connection loss: `suspended`, then `reconnected`).
   * The chroot, if given, must be the client's own.
   */
  updateServerAddresses(connectString: string): void {
    const { hosts, chroot } = parseConnectString(connectString);
    if (chroot !== this.chrootMap.prefix) {
      throw new ZooKeeperError('INVALID_ARGUMENT', `the chroot cannot change (was "${this.chrootMap.prefix}", got "${chroot}")`, { op: 'updateServerAddresses' });
    }
    this.session.updateHosts(hosts);
  }

  get state(): ClientState {
    return this.session.state;
  }

  /** The current session id (0n before the first connection and after expiry). */
  get sessionId(): bigint {
    return this.session.sessionId;
  }

  /** The session timeout the server granted (ms), 0 before the first connection. */
  get sessionTimeout(): number {
    return this.session.negotiatedTimeout;
  }

  /**
   * True from the moment `close()` is called: the session's ephemeral nodes are about to go, and
   * their deletion events may arrive before the state becomes `closed`.
   */
  get closing(): boolean {
    return this.session.isClosing;
  }

  /**
   * True once no request can succeed any more: the client is closed (or closing), or its session
   * expired and `renewExpiredSession` is false. Waiting for a reconnect is then pointless.
   */
  get terminated(): boolean {
    return this.session.isStopped;
  }

  /** `host:port` of the server in use, undefined while not connected. */
  get server(): string | undefined {
    return this.session.server;
  }

  /** True while the session is a provisional one of a read-only server (writes fail with NOTREADONLY). */
  get readOnly(): boolean {
    return this.session.readOnly;
  }

  get chroot(): string {
    return this.chrootMap.prefix;
  }

  /** The highest zxid seen on this session. */
  get lastZxid(): bigint {
    return this.session.lastZxid;
  }

  /**
   * The `performance.now()` time until which the session is certainly alive on the ensemble's
   * leader, which alone expires sessions: the send time of the newest packet the leader has
   * provably heard of, plus the negotiated timeout. A reply from a follower is no such proof
   * (followers answer pings themselves); `sync` round trips are (see liveness-proof.ts): a lock
   * holder keeps them going and must stop trusting its lock before this time.
   */
  sessionAliveUntil(): number {
    return this.session.liveness.sentAt + this.session.negotiatedTimeout;
  }

  /**
   * How old (ms) an answer must be before a `sync` sent then can carry it to the leader as proof
   * for {@link sessionAliveUntil}: a quarter of the session timeout, and 100 ms (the longest the
   * leader may go between two pings to a follower; see liveness-proof.ts). A proof that lapsed
   * can be built again no sooner than this after the first answer that followed the lapse.
   */
  get livenessRelayMs(): number {
    return this.session.liveness.relayMs;
  }

  /**
   * Calls `listener` on every state change from now on (with the reason for `suspended` and
   * `expired`), before the `state` event's listeners; returns the unsubscribe. However many
   * subscribe, the client listens to its session once: thousands of them (a lease each) trip
   * no leak warning. A listener that throws costs the client nothing: its error is rethrown on
   * its own.
   */
  onState(listener: StateListener): () => void {
    // Checked now: a listener that is no function would throw at the next state change, uncaught.
    checkFunction(listener, 'listener', { op: 'onState' }, true);
    return this.stateListeners.add(listener);
  }

  /**
   * The state changes from now on, as an async iterable:
   * `for await (const { event, reason } of client.states({ signal })) ...`. It ends after
   * `closed` (at once on a closed client), when `signal` aborts, or when the loop is left. A
   * consumer more than 64 changes behind loses the oldest ones; `client.state` is always current.
   */
  states(options?: { signal?: AbortSignal }): AsyncIterableIterator<StateChange> {
    const where = { op: 'states' };
    const { signal } = checkBounds(checkOptions(options, where), where);
    return new StateChanges(this.state === 'closed' ? undefined : (listener) => this.onState(listener), signal);
  }

  /**
   * Resolves once connected (at once if already), or, given `session`, once that session is over.
   * Rejects at once when no session can come any more (CLOSED, or AUTHFAILED when the client
   * closed because the server refused its credentials; SESSIONEXPIRED when the client does not
   * renew expired sessions), and on abort or timeout (default: the request timeout),
   * a TIMEOUT with the last connection failure since the session was last connected as `cause`.
   * The one wait for the session, the recipes' included.
   */
  waitForConnected(options?: WaitForConnectedOptions): Promise<void> {
    let timeout: number | undefined;
    let session: bigint | undefined;
    let signal: AbortSignal | undefined;
    try {
      // Checked first: a timeout of 0 is INVALID_ARGUMENT connected or not (as for every call), never "time out now".
      const where = { op: 'waitForConnected' };
      const o = checkOptions(options, where);
      ({ session, signal } = o);
      if (session !== undefined && typeof session !== 'bigint') invalidArgument('session', 'a session id (bigint)', session, where);
      timeout = o.timeout === Infinity ? undefined : checkDuration(o.timeout ?? this.requestTimeout, 'timeout', where);
      checkBounds({ signal }, where);
    } catch (error) {
      return Promise.reject(error);
    }
    if (this.session.isConnected || (session !== undefined && this.sessionId !== session)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const ended = this.noSessionToCome();
      if (ended) return reject(ended);
      if (signal?.aborted) return reject(waitAborted(signal));
      const finish = (error?: ZooKeeperError): void => {
        clearTimeout(timer);
        unsubscribe();
        signal?.removeEventListener('abort', onAbort);
        if (error) reject(error);
        else resolve();
      };
      const unsubscribe = this.onState((event, reason) => {
        if (event === 'connected' || event === 'reconnected' || (event === 'expired' && session !== undefined)) finish();
        else if (event === 'closed' || (event === 'expired' && this.terminated)) finish(reason ?? this.noSessionToCome());
      });
      const onAbort = (): void => finish(waitAborted(signal!));
      signal?.addEventListener('abort', onAbort, { once: true });
      const timedOut = (): void => finish(new ZooKeeperError('TIMEOUT', `not connected within ${timeout} ms`, { cause: this.lastFailure }));
      const timer = timeout === undefined ? undefined : setTimeout(timedOut, timeout);
    });
  }

  /** Why waiting for a session is pointless, if it is: the client is closed, or its session expired for good. */
  private noSessionToCome(): ZooKeeperError | undefined {
    if (this.closing) return this.session.closeReason ?? new ZooKeeperError('CLOSED', 'client is closed');
    if (this.terminated) return new ZooKeeperError('SESSIONEXPIRED', 'the session expired and the client does not renew it');
    return undefined;
  }

  /**
   * Adds an identity to the session (kept across reconnects); resolves once a server accepted it.
   * `digest` never fails: a wrong password is just another identity, refused later by ACLs
   * (NOAUTH). A credential the server refuses (an unknown scheme, `x509` without a client
   * certificate) rejects with AUTHFAILED and ends the client, as in Java (the server closes the
   * connection and would refuse it again): requests waiting or in flight fail with AUTHFAILED
   * (one sent before the credential may have run), `authFailed` then `closed` (reason AUTHFAILED)
   * are emitted, without `suspended`, and the session is ended on the server over a connection of
   * its own, so its ephemeral nodes go at once; `close()` resolves once that is done.
   */
  addAuth(scheme: string, auth: string | Uint8Array): Promise<void> {
    try {
      checkCredential(scheme, auth, { op: 'addAuth' });
      return this.session.addAuth(scheme, Buffer.from(typeof auth === 'string' ? Buffer.from(auth, 'utf8') : auth));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Ends the session (its ephemeral nodes are deleted at once) and releases every timer and
   * socket. While disconnected it ends the session over a connection of its own; all of it within
   * 2 s (the session timeout if shorter): when no server answers by then, it resolves all the
   * same and the ephemeral nodes stay until the server expires the session (see the README).
   */
  close(): Promise<void> {
    return this.session.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  // ---- helpers ----

  /** Every request goes out here: traced on zklock:client:request while anyone listens, untouched otherwise. */
  protected request<T>(spec: RequestSpec<T>): Promise<T> {
    if (!requestChannel.hasSubscribers) return this.session.request(spec);
    return traceRequest(spec, this.sessionId, (traced) => this.session.request(traced));
  }

  /**
   * A request as an operation's promise: the session's, then `map` (none: the reply as read).
   * Exactly one `then` for every operation, success or failure: the session settles replies in
   * the order the server sent them, and callbacks as deep as each other run in that order (an
   * `async` method, or an `await` and a `return`, would add links to some and not others, and a
   * later reply's callback overtook an earlier one's in about half the rounds).
   */
  protected send<T>(spec: RequestSpec<T>): Promise<T>;
  protected send<T, U>(spec: RequestSpec<T>, map: (value: T) => U): Promise<U>;
  protected send<T, U>(spec: RequestSpec<T>, map?: (value: T) => U): Promise<T | U> {
    return this.request(spec).then(map);
  }

  /** Emits to the application's listeners one by one, each isolated from the others (see callListener). */
  private notify<E extends keyof ClientEvents>(event: E, ...args: ClientEvents[E]): void {
    // rawListeners types each listener for its own event; they are all this event's.
    for (const listener of this.rawListeners(event) as ((...a: ClientEvents[E]) => void)[]) callListener(listener, args, this);
  }

  protected serverPath(path: string, op: string): string {
    return this.chrootMap.toServer(validatePath(path, op));
  }

  protected userPath(serverPath: string): string {
    return this.chrootMap.fromServer(serverPath) ?? serverPath;
  }
}

/** getData's reply: a node without data (null on the wire) reads as an empty buffer. */
export function readDataResult(r: Reader): DataResult {
  return { data: r.buffer() ?? EMPTY, stat: readStat(r) };
}

function waitAborted(signal: AbortSignal): ZooKeeperError {
  return new ZooKeeperError('ABORTED', 'wait for connection aborted', { cause: signal.reason });
}

/** The operation `start` begins, as its promise: a bad argument it throws rejects it, as any failure does. */
export function operation<T>(start: () => Promise<T>): Promise<T> {
  try {
    return start();
  } catch (error) {
    return Promise.reject(error);
  }
}

/** Where a call on `path` was made, for its errors; the path only when it is one (it was validated, or is about to be). */
export function at(op: string, path: unknown): Where {
  return { op, path: typeof path === 'string' ? path : undefined };
}

/** The options of a call that takes no more than its bounds, checked. */
export function callBounds(options: CallOptions | undefined, where: Where): { signal?: AbortSignal | undefined; timeout?: number | undefined } {
  return checkBounds(checkOptions(options, where), where);
}
