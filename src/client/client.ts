import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import type { RequestSpec, SaslOptions, SessionEvent, SessionState, TlsOptions } from '../connection/index.js';
import { Session, checkSaslOptions, parseConnectString } from '../connection/index.js';
import type { ACL, AclStat, ChildrenStat, MultiReadOp, PathStat, Reader, Stat, WatcherEvent, Writer } from '../protocol/index.js';
import {
  AddWatchMode,
  DEFAULT_MAX_REPLY_BYTES,
  DEFAULT_MAX_REQUEST_BYTES,
  OpCode,
  WatcherType,
  ZK_ERROR,
  ZooKeeperError,
  createOpCode,
  readAclStat,
  readChildren2,
  readCreate2,
  readMultiResults,
  readStat,
  writeCreate,
  writeMulti,
  writeMultiRead,
  writePath,
  writePathInt,
  writePathVersion,
  writePathWatch,
  writeSetACL,
  writeSetData,
} from '../protocol/index.js';
import type { AclProvider } from './acl.js';
import { OPEN_ACL_UNSAFE, aclOf } from './acl.js';
import { callListener } from './state/call-listener.js';
import type { ClientEvents } from './state/client-events.js';
import type { CreateMode } from './create-mode.js';
import { DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_SESSION_TIMEOUT_MS, checkDuration } from './durations.js';
import { hexId, sessionChannel, traceRequest, requestChannel, watchChannel } from './diagnostics.js';
import type { SessionMessage, WatchMessage } from './diagnostics.js';
import { DEFAULT_MAX_IN_FLIGHT, DEFAULT_MAX_QUEUED, checkLimit } from './limits.js';
import { checkFrameLimit } from './frame-limits.js';
import type { NodeData } from './node-data.js';
import { Chroot, ancestry, validatePath } from './paths.js';
import type { PersistentWatchOptions } from './watches/persistent-watch.js';
import { PersistentWatch } from './watches/persistent-watch.js';
import type { StateChange } from './state/state-changes.js';
import { StateChanges } from './state/state-changes.js';
import type { StateListener } from './state/state-listeners.js';
import { StateListeners } from './state/state-listeners.js';
import type { Op, OpResult } from './transaction.js';
import { toMultiOps, toOpResults } from './transaction.js';
import { CONFIG_NODE, ConfigWatchers } from './watches/config-watch.js';
import type { Where } from './validate.js';
import {
  checkAcl,
  checkBoolean,
  checkBounds,
  checkCreateMode,
  checkCredential,
  checkCredentials,
  checkCreatePath,
  checkData,
  checkFunction,
  checkMultiReadOp,
  checkOps,
  checkOptions,
  checkVersion,
  invalidArgument,
} from './validate.js';
import type { Watcher } from './watches/watch-event.js';
import type { WatchClass, WatchKind } from './watches/watch-manager.js';
import { WATCH_CLASSES, WatchManager } from './watches/watch-manager.js';

export interface ClientOptions {
  /** Requested session timeout in ms (the server clamps it to its min/max), in (0, 2^31−1]. Default 15000. */
  sessionTimeout?: number;
  /** Bound on how long a request (and `connect()`) waits for a connection when it has no timeout of its own, ms in (0, 2^31−1]. Default 20000. */
  requestTimeout?: number;
  /** Connect over TLS to a secure client port; Node's `tls.connect` options are passed through. */
  tls?: TlsOptions | boolean;
  /**
   * Auth to add before anything else on every connection, e.g. `{ scheme: 'digest', auth: 'user:pass' }`.
   * The session counts as connected only once the server accepted them; one it refuses
   * (AUTHFAILED) closes the client: `connect()` rejects with AUTHFAILED (see {@link ZooKeeperClient.addAuth}).
   */
  auth?: readonly { scheme: string; auth: string | Uint8Array }[];
  /**
   * SASL DIGEST-MD5 credentials (a JAAS `Server` section with `DigestLoginModule` on the server),
   * authenticated on every connection before anything else; the session then has the identity
   * `sasl:<username>` (ACL scheme `sasl`). Counts as connected only once the server accepted them;
   * a refusal closes the client, as for `auth` (AUTHFAILED). Kerberos (GSSAPI) is not supported.
   */
  sasl?: SaslOptions;
  /**
   * The ACL of every node created without an explicit `acl` (create, ensurePath, a transaction's
   * creates, and every node a recipe makes without its own `acl` option): a list, or a function
   * of the path as Curator's ACLProvider. Default OPEN_ACL_UNSAFE (anyone may do anything).
   */
  defaultAcl?: AclProvider;
  /**
   * Accept read-only servers (members of a minority partition). A read-only session is local to
   * its server: the client looks for a read/write server meanwhile and moves there with a new
   * session (`connecting`, then `connected`; never `expired`). See the README. Default false.
   */
  readOnly?: boolean;
  /** After expiry, start a new session automatically. Default true. */
  renewExpiredSession?: boolean;
  /**
   * Requests written to the server and not yet answered, at most (≥ 1, or Infinity). Those
   * beyond wait in the client, in call order, and go out as replies come in; a connection loss
   * fails them with those in flight (CONNECTIONLOSS, "not sent"). Default 2048 (see limits.ts).
   */
  maxInFlight?: number;
  /**
   * Requests waiting to be written (for a connection, or for room under maxInFlight), at most
   * (≥ 0, or Infinity); one more fails at once with OVERLOADED. 0: nothing waits, a request
   * that cannot be written at once fails. A request that timed out or was aborted while waiting
   * behind others counts until the queue reaches it (it holds its frame until then), so the bound
   * holds for memory too. Default 100,000 (see limits.ts).
   */
  maxQueued?: number;
  /**
   * Longest request sent, in bytes of the frame after its length prefix (what the server's
   * jute.maxbuffer bounds: it drops the connection of a longer one). A longer request fails at
   * once with `DATA_TOO_LARGE` and is not sent. Set it to the server's jute.maxbuffer when that
   * is not the default. In [1024, 256 MiB]; default 1048575 (0xfffff, the server's default).
   */
  maxRequestBytes?: number;
  /**
   * Longest reply read, in bytes of the frame after its length prefix. The server sends replies
   * of any length (a getChildren of 100,000 children is 1.6 MB): a longer one fails only its own
   * request, with `REPLY_TOO_LARGE`, and its bytes are skipped, not buffered; the connection and
   * the requests around it go on. A watch event is read whole whatever its length (skipped, it
   * would be lost; its path came within the server's jute.maxbuffer). In [1024, 256 MiB]; default
   * 1049599 (0xfffff + 1024: the reply to a getData of the largest node a default server stores
   * is a little over jute.maxbuffer).
   */
  maxReplyBytes?: number;
}

/** Bounds on one call: an AbortSignal and/or a timeout (ms, at most 2^31−1) covering the whole request. */
export interface CallOptions {
  signal?: AbortSignal;
  timeout?: number;
}

export interface WaitForConnectedOptions extends CallOptions {
  /** Default the request timeout; `Infinity` waits for as long as it takes (to be bounded by `signal` alone). */
  timeout?: number;
  /**
   * Also resolve once this session is over (expired, or replaced by a new one): a caller whose
   * ephemeral nodes went with it must start over rather than wait for a connection.
   */
  session?: bigint;
}

export interface CreateOptions extends CallOptions {
  mode?: CreateMode;
  acl?: readonly ACL[];
  /** Time to live (ms) for the TTL modes. */
  ttl?: number;
}

export interface VersionOptions extends CallOptions {
  /** Expected version; -1 (the default) matches any. */
  version?: number;
}

export interface WatchOptions extends CallOptions {
  /** A one-shot watch, delivered once to this callback. */
  watch?: Watcher;
}

export interface DataResult {
  data: Buffer;
  stat: Stat;
}

export type MultiReadResult = { op: 'getData'; data: Buffer; stat: Stat } | { op: 'getChildren'; children: string[] } | ZooKeeperError;

export type ClientState = SessionState;

/** The one-shot watch classes, as removeAllWatches and checkWatches name them: `any` is both. */
export type OneShotWatchType = 'data' | 'children' | 'any';

/** One identity of a session, as whoAmI reports it. */
export interface ClientIdentity {
  scheme: string;
  user: string;
}

const EMPTY = Buffer.alloc(0);

/** removeWatches' type for each one-shot watch class (data covers the watches exists sets). */
const REMOVE_TYPE: Record<WatchClass, number> = { data: WatcherType.data, child: WatcherType.children };

/** ensurePath gives up when parents it saw vanish this often: someone deletes them as fast as it creates. */
const MAX_VANISHED_PARENTS = 10;

/**
 * A ZooKeeper client: one session, kept across reconnects. Every method validates its input
 * before sending and rejects with a {@link ZooKeeperError}. Its events are {@link ClientEvents}.
 */
export class ZooKeeperClient extends EventEmitter<ClientEvents> {
  private readonly session: Session;
  private readonly chrootMap: Chroot;
  private readonly watches: WatchManager;
  private readonly configWatchers = new ConfigWatchers();
  private readonly stateListeners = new StateListeners();
  /** The last connection failure since the session was last connected: why a wait for it timed out. */
  private lastFailure: Error | undefined;
  /** The session id as of the last state change but expiry: what an `expired` event names. */
  private lastSessionId = 0n;
  private readonly requestTimeout: number;
  private readonly defaultAcl: AclProvider;

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

  /**
   * Creates a client and waits until its session is established and the server accepted the
   * `auth` credentials (bounded by `timeout`, default the request timeout). Rejects with AUTHFAILED,
   * the client closed, when the server refuses them. A TIMEOUT has the last connection failure as
   * its `cause`: refused, DNS, TLS.
   */
  static async connect(connectString: string, options: ClientOptions & CallOptions = {}): Promise<ZooKeeperClient> {
    const client = new ZooKeeperClient(connectString, options);
    try {
      await client.waitForConnected({ signal: options.signal, timeout: options.timeout });
      return client;
    } catch (error) {
      await client.close();
      throw error;
    }
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

  /** The ACL a create of `path` without an explicit `acl` gets: the `defaultAcl` option's. */
  aclFor(path: string): readonly ACL[] {
    return checkAcl(aclOf(this.defaultAcl, path), at('create', path), 'defaultAcl');
  }

  // ---- operations ----

  create(path: string, data?: NodeData, options?: CreateOptions): Promise<PathStat> {
    return operation(() => {
      const where = at('create', path);
      const o = checkOptions(options, where);
      const { flags, ttl } = checkCreateMode(o.mode, o.ttl, where);
      checkCreatePath(path, flags, 'create');
      const body = { path: this.chrootMap.toServer(path), data: checkData(data, where), acl: o.acl === undefined ? this.aclFor(path) : checkAcl(o.acl, where), flags, ttl };
      const spec = { type: createOpCode(flags), op: 'create', path, write: (w: Writer) => writeCreate(w, body), read: readCreate2, ...checkBounds(o, where) };
      return this.send(spec, (result) => ({ path: this.userPath(result.path), stat: result.stat }));
    });
  }

  delete(path: string, options?: VersionOptions): Promise<void> {
    return operation(() => {
      const server = this.serverPath(path, 'delete');
      const where = at('delete', path);
      const o = checkOptions(options, where);
      const version = checkVersion(o.version, where);
      return this.send<void>({ type: OpCode.delete, op: 'delete', path, write: (w) => writePathVersion(w, server, version), ...checkBounds(o, where) });
    });
  }

  /** The node's Stat, or null when it does not exist. A watch fires on creation, change or deletion. */
  exists(path: string, options?: WatchOptions): Promise<Stat | null> {
    return operation(() => {
      const server = this.serverPath(path, 'exists');
      const where = at('exists', path);
      const o = checkOptions(options, where);
      const watch = checkFunction(o.watch, 'watch', where);
      const spec = checkBounds(o, where);
      // The session answers NONODE with null, building no error to catch.
      return this.watchedRequest<Stat | null>('data', watch, existsWatchKind, (setWatch) => ({
        type: OpCode.exists,
        op: 'exists',
        path,
        write: (w) => writePathWatch(w, server, setWatch),
        read: readStat,
        ...spec,
      }));
    });
  }

  getData(path: string, options?: WatchOptions): Promise<DataResult> {
    return this.readData('getData', path, options);
  }

  /** getData as `op` (getConfig without a chroot is one). */
  private readData(op: string, path: string, options: WatchOptions | undefined): Promise<DataResult> {
    return operation(() => {
      const server = this.serverPath(path, op);
      const where = at(op, path);
      const o = checkOptions(options, where);
      const watch = checkFunction(o.watch, 'watch', where);
      const spec = checkBounds(o, where);
      return this.watchedRequest('data', watch, (err) => (err === 0 ? 'data' : undefined), (setWatch) => ({
        type: OpCode.getData,
        op,
        path,
        write: (w) => writePathWatch(w, server, setWatch),
        read: readDataResult,
        ...spec,
      }));
    });
  }

  setData(path: string, data: NodeData, options?: VersionOptions): Promise<Stat> {
    return operation(() => {
      const server = this.serverPath(path, 'setData');
      const where = at('setData', path);
      const o = checkOptions(options, where);
      const bytes = checkData(data, where);
      const version = checkVersion(o.version, where);
      return this.send({
        type: OpCode.setData,
        op: 'setData',
        path,
        write: (w) => writeSetData(w, server, bytes, version),
        read: readStat,
        ...checkBounds(o, where),
      });
    });
  }

  /** Children names (unsorted, as the server lists them) and the parent's Stat. */
  getChildren(path: string, options?: WatchOptions): Promise<ChildrenStat> {
    return operation(() => {
      const server = this.serverPath(path, 'getChildren');
      const where = at('getChildren', path);
      const o = checkOptions(options, where);
      const watch = checkFunction(o.watch, 'watch', where);
      const spec = checkBounds(o, where);
      return this.watchedRequest('child', watch, (err) => (err === 0 ? 'child' : undefined), (setWatch) => ({
        type: OpCode.getChildren2,
        op: 'getChildren',
        path,
        write: (w) => writePathWatch(w, server, setWatch),
        read: readChildren2,
        ...spec,
      }));
    });
  }

  getACL(path: string, options?: CallOptions): Promise<AclStat> {
    return operation(() => {
      const server = this.serverPath(path, 'getACL');
      return this.send({ type: OpCode.getACL, op: 'getACL', path, write: (w) => writePath(w, server), read: readAclStat, ...callBounds(options, at('getACL', path)) });
    });
  }

  setACL(path: string, acl: readonly ACL[], options?: VersionOptions): Promise<Stat> {
    return operation(() => {
      const server = this.serverPath(path, 'setACL');
      const where = at('setACL', path);
      const o = checkOptions(options, where);
      // Required here: a missing list is no "default ACL" to set.
      const entries = checkAcl(acl ?? null, where);
      const version = checkVersion(o.version, where);
      return this.send({
        type: OpCode.setACL,
        op: 'setACL',
        path,
        write: (w) => writeSetACL(w, server, entries, version),
        read: readStat,
        ...checkBounds(o, where),
      });
    });
  }

  /** Waits until the server this session uses has caught up with the leader (for reads after another client's write). */
  sync(path = '/', options?: CallOptions): Promise<void> {
    return operation(() => {
      const server = this.serverPath(path, 'sync');
      // The reply's path is read past, not returned.
      return this.send<void>({ type: OpCode.sync, op: 'sync', path, write: (w) => writePath(w, server), read: (r) => void r.string(), ...callBounds(options, at('sync', path)) });
    });
  }

  /** Runs ops atomically: all apply or none. A failure throws a MultiError naming the failing op. */
  multi(ops: readonly Op[], options?: CallOptions): Promise<OpResult[]> {
    return operation(() => {
      const multiOps = toMultiOps(ops, this.chrootMap, (path) => this.aclFor(path));
      const spec = { type: OpCode.multi, op: 'multi', write: (w: Writer) => writeMulti(w, multiOps), read: readMultiResults, ...callBounds(options, { op: 'multi' }) };
      return this.send(spec, (raw) => toOpResults(ops, raw, this.chrootMap));
    });
  }

  /** Several reads in one round trip; each result is the value or the error of that read. */
  multiRead(ops: readonly MultiReadOp[], options?: CallOptions): Promise<MultiReadResult[]> {
    return operation(() => {
      const where = { op: 'multiRead' };
      const serverOps = (checkOps(ops, where, false) as readonly MultiReadOp[]).map((op, i) => {
        const read = checkMultiReadOp(op, i);
        return { type: read.type, path: this.chrootMap.toServer(read.path) };
      });
      const spec = { type: OpCode.multiRead, op: 'multiRead', write: (w: Writer) => writeMultiRead(w, serverOps), read: readMultiResults, ...callBounds(options, where) };
      return this.send(spec, (raw) =>
        raw.map((r, i): MultiReadResult => {
          if (r.type === OpCode.error || r.err !== 0) return ZooKeeperError.fromServer(r.err, 'multiRead', ops[i]?.path);
          return r.type === OpCode.getData ? { op: 'getData', data: r.data ?? EMPTY, stat: r.stat! } : { op: 'getChildren', children: r.children ?? [] };
        }),
      );
    });
  }

  /**
   * A persistent watch on `path` (and, with `recursive`, every node below it). One-shot watches
   * on the same path are then served by it, without a server watch of their own (see WatchManager).
   */
  addWatch(path: string, options?: CallOptions & PersistentWatchOptions & { recursive?: boolean }): Promise<PersistentWatch> {
    return operation(() => {
      const server = this.serverPath(path, 'addWatch');
      const where = at('addWatch', path);
      const o = checkOptions(options, where);
      const recursive = checkBoolean(o.recursive, 'recursive', where) ?? false;
      const spec = checkBounds(o, where);
      if (this.watches.hasOtherMode(path, recursive)) {
        throw new ZooKeeperError('INVALID_ARGUMENT', 'the server keeps one persistent watch mode per path and session: remove the other mode first', { op: 'addWatch', path });
      }
      const watch = new PersistentWatch(path, recursive, (w) => this.removePersistentWatch(w), o);
      this.watches.adding(watch);
      const request = {
        type: OpCode.addWatch,
        op: 'addWatch',
        path,
        write: (w: Writer) => writePathInt(w, server, recursive ? AddWatchMode.persistentRecursive : AddWatchMode.persistent),
        onReply: (err: number) => {
          if (err === 0) this.watches.added(watch);
        },
        ...spec,
      };
      // One `then` from the session's promise, as every operation (see send).
      return this.request(request).then(
        () => watch,
        (error: unknown) => {
          // A request that timed out or was aborted after it was sent may still be applied.
          if (this.watches.drop(watch)) this.clearServerWatches(path, recursive).catch(() => undefined);
          throw error;
        },
      );
    });
  }

  private async removePersistentWatch(watch: PersistentWatch): Promise<void> {
    if (this.watches.drop(watch)) await this.clearServerWatches(watch.path, watch.recursive);
  }

  /**
   * Ends this session's persistent registration of `path` on the server and keeps its one-shot
   * watches. Those the persistent watch served get a server watch first, while the persistent
   * registration still reports every event, so that none falls between the two. Then the
   * persistent type is removed (a 3.9+ server), and the one-shot classes nobody wants: on a 3.8
   * server, which knows no persistent type (MARSHALLINGERROR), that removes the persistent
   * registration, and on 3.9+ a one-shot registration left beside it. All go out at once, so no
   * request this client makes later can come between them.
   */
  private async clearServerWatches(path: string, recursive: boolean): Promise<void> {
    const wanted = this.watches.classesWanted(path);
    await Promise.all([
      ...wanted.map((watchClass) => this.rearmOneShot(path, watchClass)),
      this.removeServerWatch(path, recursive ? WatcherType.persistentRecursive : WatcherType.persistent),
      ...WATCH_CLASSES.filter((watchClass) => !wanted.includes(watchClass)).map((watchClass) => this.removeServerWatch(path, REMOVE_TYPE[watchClass])),
    ]);
  }

  /** Sets again a one-shot watch of `watchClass` on `path`, for the watchers registered or being registered by requests in flight. */
  private rearmOneShot(path: string, watchClass: WatchClass): Promise<unknown> {
    const server = this.chrootMap.toServer(path);
    // exists sets a watch whether or not the node exists; getChildren on a vanished node fails,
    // and then its child watchers already had (or will have) their deletion event.
    const type = watchClass === 'data' ? OpCode.exists : OpCode.getChildren;
    return this.send({ type, op: 'rearmWatch', path, write: (w) => writePathWatch(w, server, true) }).catch(() => undefined);
  }

  /**
   * Removes a one-shot watcher from `path`, also one whose request is still awaiting its reply
   * (that one is never called). A registered one is called once more, with `dataWatchRemoved` or
   * `childWatchRemoved` (once per class it was on), as in Java. Rejects with NOWATCHER, changing
   * nothing, when the watcher is not on `path`: it fired already, or never was. The server's
   * watch is removed too once no local watcher needs it and no request in flight of this client
   * is setting it for another watcher (then when the last such request is answered without
   * registering one).
   */
  async removeWatcher(path: string, watcher: Watcher, options?: CallOptions): Promise<void> {
    validatePath(path, 'removeWatcher');
    const where = at('removeWatcher', path);
    checkFunction(watcher, 'watcher', where, true);
    await this.removeWatchers(path, watcher, WATCH_CLASSES, callBounds(options, where), where);
  }

  /**
   * Removes every one-shot watcher of this client on `path` of `type` (`any`: both), each told as
   * by {@link removeWatcher}, and the server's watch; NOWATCHER when there was none. Persistent
   * watches are not touched: `remove()` them.
   */
  async removeAllWatches(path: string, type: OneShotWatchType, options?: CallOptions): Promise<void> {
    validatePath(path, 'removeAllWatches');
    const where = at('removeAllWatches', path);
    const classes = watchClassesOf(type, where);
    await this.removeWatchers(path, undefined, classes, callBounds(options, where), where);
  }

  private async removeWatchers(path: string, watcher: Watcher | undefined, classes: readonly WatchClass[], options: CallOptions, where: Where): Promise<void> {
    const { matched, unwanted } = this.watches.remove(path, watcher, classes);
    if (!matched) throw new ZooKeeperError('NOWATCHER', watcher ? 'this watcher is not on the path' : 'no watcher of this client on the path', where);
    await Promise.all(unwanted.map((watchClass) => this.removeServerWatch(path, REMOVE_TYPE[watchClass], options)));
  }

  /**
   * Resolves when the server holds a watch of this session of `type` on `path` (a persistent
   * watch counts for both), else rejects with NOWATCHER. One-shot watches a persistent watch of
   * this client serves have no server watch of their own (see the README).
   */
  checkWatches(path: string, type: OneShotWatchType, options?: CallOptions): Promise<void> {
    return operation(() => {
      const server = this.serverPath(path, 'checkWatches');
      const where = at('checkWatches', path);
      watchClassesOf(type, where);
      const spec = callBounds(options, where);
      return this.send<void>({ type: OpCode.checkWatches, op: 'checkWatches', path, write: (w) => writePathInt(w, server, WatcherType[type]), ...spec });
    });
  }

  /**
   * The ensemble's dynamic configuration (the data of /zookeeper/config, whatever the chroot:
   * under one, a getData of that path reads below the chroot instead). Its `watch` fires on the
   * next reconfiguration, with the path /zookeeper/config.
   */
  getConfig(options?: WatchOptions): Promise<DataResult> {
    if (!this.chrootMap.prefix) return this.readData('getConfig', CONFIG_NODE, options);
    return operation(() => {
      const where = { op: 'getConfig', path: CONFIG_NODE };
      const o = checkOptions(options, where);
      const watch = checkFunction(o.watch, 'watch', where);
      const spec = checkBounds(o, where);
      return this.send({
        type: OpCode.getData,
        op: 'getConfig',
        path: CONFIG_NODE,
        write: (w) => writePathWatch(w, CONFIG_NODE, watch !== undefined),
        read: readDataResult,
        onReply: (err) => {
          if (err === 0 && watch) this.configWatchers.add(watch);
        },
        ...spec,
      });
    });
  }

  /** The identities the server knows this session by (`ip`, and those added with addAuth). A 3.7+ server; an older one answers UNIMPLEMENTED. */
  whoAmI(options?: CallOptions): Promise<ClientIdentity[]> {
    return operation(() => this.send({ type: OpCode.whoAmI, op: 'whoAmI', read: readClientInfos, ...callBounds(options, { op: 'whoAmI' }) }));
  }

  private async removeServerWatch(path: string, type: number, options: CallOptions = {}): Promise<void> {
    // options: checked by the caller.
    if (this.state === 'closed' || this.state === 'expired') return;
    const server = this.chrootMap.toServer(path);
    try {
      await this.send({ type: OpCode.removeWatches, op: 'removeWatches', path, write: (w) => writePathInt(w, server, type), signal: options.signal, timeout: options.timeout });
    } catch (error) {
      // NOWATCHER: the watch already fired or went with the session; CONNECTIONLOSS: not re-registered after a reconnect;
      // MARSHALLINGERROR: a persistent type, which servers before 3.9 do not know (see clearServerWatches).
      const ignored = ['NOWATCHER', 'CONNECTIONLOSS', 'CLOSED', 'SESSIONEXPIRED', ...(type >= WatcherType.persistent ? ['MARSHALLINGERROR'] : [])];
      if (!(error instanceof ZooKeeperError) || !ignored.includes(error.code)) throw error;
    }
  }

  /** The session's ephemeral nodes under `prefix`. */
  getEphemerals(prefix = '/', options?: CallOptions): Promise<string[]> {
    return operation(() => {
      const server = this.serverPath(prefix, 'getEphemerals');
      const spec = callBounds(options, at('getEphemerals', prefix));
      const request = { type: OpCode.getEphemerals, op: 'getEphemerals', path: prefix, write: (w: Writer) => writePath(w, server), read: (r: Reader) => r.strings(), ...spec };
      return this.send(request, (paths) => paths.flatMap((p) => this.chrootMap.fromServer(p) ?? []));
    });
  }

  /** The number of all descendants of `path`. */
  getAllChildrenNumber(path: string, options?: CallOptions): Promise<number> {
    return operation(() => {
      const server = this.serverPath(path, 'getAllChildrenNumber');
      const spec = callBounds(options, at('getAllChildrenNumber', path));
      return this.send({ type: OpCode.getAllChildrenNumber, op: 'getAllChildrenNumber', path, write: (w) => writePath(w, server), read: (r) => r.int(), ...spec });
    });
  }

  /**
   * Creates `path` and any missing parents (as containers with `container: true`, which the server
   * deletes once empty). Existing nodes are left as they are. `timeout` and `signal` bound the
   * whole walk. A missing chroot fails at once with CHROOT_MISSING: nothing can be created in it
   * (`ensurePath('/')` asks the server about the chroot: one request, none without a chroot).
   * `acl` (a list, or a function of each node's path) is that of every node it creates; default `defaultAcl`.
   */
  async ensurePath(path: string, options?: CallOptions & { container?: boolean; acl?: AclProvider }): Promise<void> {
    validatePath(path, 'ensurePath');
    const where = at('ensurePath', path);
    const o = checkOptions(options, where);
    const { signal, timeout } = checkBounds(o, where);
    // A function is asked for each node it creates (its answer checked by create).
    const acl = o.acl === undefined || typeof o.acl === 'function' ? o.acl : checkAcl(o.acl, where);
    if (path === '/') {
      // The root always exists, but a chroot may not: a caller told "ensured" would create under
      // it, be refused with NONODE, and ensure again for ever (a SimpleLock on a top-level path).
      if (this.chrootMap.prefix && !(await this.exists('/', { signal, timeout }))) throw this.missingRoot(path);
      return;
    }
    const mode: CreateMode = checkBoolean(o.container, 'container', where) ? 'CONTAINER' : 'PERSISTENT';
    const endAt = timeout === undefined ? undefined : performance.now() + timeout;
    const chain = ancestry(path);
    // Each create either moves one level down (done, or it exists) or one level up (its parent is
    // missing); up only past what this walk saw exist when someone deletes it meanwhile, counted.
    let level = chain.length - 1;
    let parentSeen = false;
    let vanished = 0;
    while (level < chain.length) {
      const remaining = endAt === undefined ? undefined : endAt - performance.now();
      if (remaining !== undefined && remaining < 1) throw new ZooKeeperError('TIMEOUT', `not ensured within ${timeout} ms`, { op: 'ensurePath', path });
      const node = chain[level]!;
      try {
        await this.create(node, EMPTY, { mode, acl: acl && aclOf(acl, node), signal, timeout: remaining });
      } catch (error) {
        if (!(error instanceof ZooKeeperError) || (error.code !== 'NODEEXISTS' && error.code !== 'NONODE')) throw error;
        if (error.code === 'NONODE') {
          if (level === 0) throw this.missingRoot(path);
          if (parentSeen && ++vanished > MAX_VANISHED_PARENTS) {
            throw new ZooKeeperError('NONODE', `parents were deleted ${vanished} times while being created`, { op: 'ensurePath', path });
          }
          parentSeen = false;
          level--;
          continue;
        }
      }
      parentSeen = true;
      level++;
    }
  }

  /** A top-level node cannot be created: only a missing chroot explains that ('/' always exists). */
  private missingRoot(path: string): ZooKeeperError {
    const chroot = this.chrootMap.prefix;
    const message = chroot
      ? `the chroot ${chroot} of the connect string does not exist: create it (connected without the chroot) or fix the connect string`
      : 'the server reports the root missing';
    return new ZooKeeperError(chroot ? 'CHROOT_MISSING' : 'NONODE', message, { zkCode: ZK_ERROR.NONODE, op: 'ensurePath', path });
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
  private request<T>(spec: RequestSpec<T>): Promise<T> {
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
  private send<T>(spec: RequestSpec<T>): Promise<T>;
  private send<T, U>(spec: RequestSpec<T>, map: (value: T) => U): Promise<U>;
  private send<T, U>(spec: RequestSpec<T>, map?: (value: T) => U): Promise<T | U> {
    return this.request(spec).then(map);
  }

  /** Emits to the application's listeners one by one, each isolated from the others (see callListener). */
  private notify<E extends keyof ClientEvents>(event: E, ...args: ClientEvents[E]): void {
    // rawListeners types each listener for its own event; they are all this event's.
    for (const listener of this.rawListeners(event) as ((...a: ClientEvents[E]) => void)[]) callListener(listener, args, this);
  }

  private serverPath(path: string, op: string): string {
    return this.chrootMap.toServer(validatePath(path, op));
  }

  private userPath(serverPath: string): string {
    return this.chrootMap.fromServer(serverPath) ?? serverPath;
  }

  /**
   * Sends a read that sets a one-shot watch for `watcher` (without one, a plain read); `build`
   * makes the request, with or without a server watch. Until its reply, or its failure without
   * one, the request counts as in flight for removeWatcher; `kindOf` tells which watch the reply's
   * error code says the server set (none: no watch). A read a persistent watch was to serve is
   * sent again, with a server watch, when that watch's addWatch failed; within the same bounds.
   */
  private watchedRequest<T>(watchClass: WatchClass, watcher: Watcher | undefined, kindOf: (err: number) => WatchKind | undefined, build: (setWatch: boolean) => RequestSpec<T>): Promise<T> {
    if (!watcher) return this.send(build(false));
    const { path, op, timeout } = build(true);
    const endAt = timeout === undefined ? undefined : performance.now() + timeout;
    const attempt = (left: number | undefined): Promise<T> => {
      const request = this.watches.begin(watchClass, path!, watcher);
      let again: Promise<T> | undefined;
      const end = (kind: WatchKind | undefined): void => {
        // The server watch nobody wants any more, kept for this request: it goes after the request, in order.
        if (this.watches.end(request, kind)) this.removeServerWatch(path!, REMOVE_TYPE[watchClass]).catch(() => undefined);
      };
      const onReply = (err: number): void => {
        end(kindOf(err));
        // At once: removeWatcher must find the watcher in flight all along.
        if (request.resend) again = sendAgain();
      };
      // Its own one `then` below, as send's.
      const reply = this.request({ ...build(!request.clientSide), timeout: left, onReply });
      // Failed without a reply (timeout, abort, connection loss, close): its watcher will never be registered.
      reply.catch(() => end(undefined));
      return reply.then(
        (result) => again ?? result,
        (error: unknown) => {
          if (again) return again;
          throw error;
        },
      );
    };
    const sendAgain = (): Promise<T> => {
      const left = endAt === undefined ? undefined : Math.floor(endAt - performance.now());
      if (left !== undefined && left < 1) return Promise.reject(new ZooKeeperError('TIMEOUT', `no reply within ${timeout} ms`, { op, path }));
      return attempt(left);
    };
    return attempt(timeout);
  }
}

/** exists sets a watch whether or not the node exists: on a missing one it waits for the creation. */
function existsWatchKind(err: number): WatchKind | undefined {
  return err === 0 ? 'data' : err === ZK_ERROR.NONODE ? 'exist' : undefined;
}

/** whoAmI's reply: a vector of ClientInfo {authScheme, user}. */
function readClientInfos(r: Reader): ClientIdentity[] {
  const count = r.int();
  const identities: ClientIdentity[] = [];
  for (let i = 0; i < count; i++) identities.push({ scheme: r.string(), user: r.string() });
  return identities;
}

function watchClassesOf(type: unknown, where: Where): readonly WatchClass[] {
  if (type === 'data') return ['data'];
  if (type === 'children') return ['child'];
  if (type === 'any') return WATCH_CLASSES;
  return invalidArgument('type', "'data', 'children' or 'any'", type, where);
}

/** getData's reply: a node without data (null on the wire) reads as an empty buffer. */
function readDataResult(r: Reader): DataResult {
  return { data: r.buffer() ?? EMPTY, stat: readStat(r) };
}

function waitAborted(signal: AbortSignal): ZooKeeperError {
  return new ZooKeeperError('ABORTED', 'wait for connection aborted', { cause: signal.reason });
}

/** The operation `start` begins, as its promise: a bad argument it throws rejects it, as any failure does. */
function operation<T>(start: () => Promise<T>): Promise<T> {
  try {
    return start();
  } catch (error) {
    return Promise.reject(error);
  }
}

/** Where a call on `path` was made, for its errors; the path only when it is one (it was validated, or is about to be). */
function at(op: string, path: unknown): Where {
  return { op, path: typeof path === 'string' ? path : undefined };
}

/** The options of a call that takes no more than its bounds, checked. */
function callBounds(options: CallOptions | undefined, where: Where): { signal?: AbortSignal | undefined; timeout?: number | undefined } {
  return checkBounds(checkOptions(options, where), where);
}
