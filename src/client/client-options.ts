import type { SaslOptions, SessionState, TlsOptions } from '../connection/index.js';
import type { ACL, Stat, ZooKeeperError } from '../protocol/index.js';
import type { AclProvider } from './acl.js';
import type { CreateMode } from './create-mode.js';
import type { Watcher } from './watches/watch-event.js';

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
  /**
   * Follow the ensemble's membership: read /zookeeper/config (with a watch) on every connection
   * and on every change, and `updateServerAddresses` with its members' client addresses (see
   * follow-config.ts). The connect string only finds the ensemble the first time. Default false.
   * Refused with `tls` (INVALID_ARGUMENT): the config holds no member's secure client port.
   */
  followConfig?: boolean;
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
