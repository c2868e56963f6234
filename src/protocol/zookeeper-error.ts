import type { ServerErrorCode, ServerErrorName } from './error-codes.js';
import { errorName, serverErrorNumber } from './error-codes.js';

/**
 * Codes the client raises on its own, without a server reply (one line per code). Server codes
 * are the names of ZK_ERROR (`NONODE`, `NODEEXISTS`, `CONNECTIONLOSS`, ...), written as ZooKeeper
 * writes them; these are zklock's, in SNAKE_CASE. A meaning that has a server name uses it.
 */
export type LocalErrorCode =
  | 'CLOSED'
  | 'TIMEOUT'
  | 'ABORTED'
  | 'INVALID_PATH'
  | 'INVALID_ARGUMENT'
  | 'DATA_TOO_LARGE'
  | 'REPLY_TOO_LARGE'
  | 'PROTOCOL_ERROR'
  | 'CHROOT_MISSING'
  | 'WATCH_OVERFLOW'
  | 'OVERLOADED';

/**
 * The codes of the layers above the client (the lock recipes': LOCK_TIMEOUT, NODE_DELETED, ...),
 * merged in by those layers (see recipes/support/lock-error.ts) so that `code` stays one closed union
 * while this layer knows nothing of theirs. Only the keys matter.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface ErrorCodeExtensions {}

/** Every `ZooKeeperError.code`: a typo in a comparison with one fails to compile. */
export type ZooKeeperErrorCode = ServerErrorCode | LocalErrorCode | keyof ErrorCodeExtensions;

export interface ZooKeeperErrorDetails {
  /** The numeric ZooKeeper code; by default the number of a server `code`'s name. */
  zkCode?: number | undefined;
  path?: string | undefined;
  /** The operation that failed, e.g. `getData`. */
  op?: string | undefined;
  cause?: unknown;
}

/** The one error type of the client: a stable string `code`, the numeric code, the path and the operation. */
export class ZooKeeperError extends Error {
  readonly code: ZooKeeperErrorCode;
  /** The numeric ZooKeeper code, when the error came from (or mirrors) a server code. */
  readonly zkCode: number | undefined;
  readonly path: string | undefined;
  readonly op: string | undefined;
  /** What happened, without the code and the op and path that `message` adds around it. */
  readonly detail: string;

  constructor(code: ZooKeeperErrorCode, message: string, details: ZooKeeperErrorDetails = {}) {
    const where = [details.op, details.path].filter(Boolean).join(' ');
    super(where ? `${code}: ${message} (${where})` : `${code}: ${message}`, { cause: details.cause });
    this.name = 'ZooKeeperError';
    this.detail = message;
    this.code = code;
    this.zkCode = details.zkCode ?? serverErrorNumber(code);
    this.path = details.path;
    this.op = details.op;
  }

  /** An error for a non-zero reply code from the server (built without a stack: see {@link withoutStack}). */
  static fromServer(zkCode: number, op?: string, path?: string): ZooKeeperError {
    const code = errorName(zkCode);
    return withoutStack(() => new ZooKeeperError(code, describe(code, zkCode), { zkCode, op, path }));
  }
}

/**
 * Builds an error without capturing a stack trace. For errors made while handling a reply or
 * failing a backlog: a server's NONODE or NODEEXISTS is an expected answer (exists, ensurePath,
 * lock waits), and the stack would hold only the socket's frames, never the caller's, yet its
 * capture costs several times the rest of the error (4× the cost of an exists that finds its
 * node). `instanceof`, `code`, `message`, `op`, `path` and `cause` are as usual; `stack` is the
 * header line alone. Where Error.stackTraceLimit cannot be set (frozen intrinsics), the error
 * keeps its stack.
 */
export function withoutStack<E extends Error>(make: () => E): E {
  const limit = Error.stackTraceLimit;
  if (!Reflect.set(Error, 'stackTraceLimit', 0)) return make();
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

const DESCRIPTIONS: Partial<Record<ServerErrorName, string>> = {
  NONODE: 'node does not exist',
  NODEEXISTS: 'node already exists',
  BADVERSION: 'version does not match',
  NOTEMPTY: 'node has children',
  NOAUTH: 'not authorised',
  CONNECTIONLOSS: 'connection lost; the outcome of the request is unknown',
  SESSIONEXPIRED: 'session expired',
  NOCHILDRENFOREPHEMERALS: 'ephemeral nodes cannot have children',
  UNIMPLEMENTED: 'operation not supported by the server (for TTL nodes: zookeeper.extendedTypesEnabled)',
  INVALIDACL: 'invalid ACL',
  AUTHFAILED: 'authentication failed',
};

function describe(code: ServerErrorCode, zkCode: number): string {
  if (code === 'UNKNOWN') return `server returned error code ${zkCode}, unknown to this client`;
  return DESCRIPTIONS[code] ?? 'server returned an error';
}

/** True for a ZooKeeperError (with `code`, of that code, and narrowed to it). */
export function isZooKeeperError<C extends ZooKeeperErrorCode>(error: unknown, code?: C): error is ZooKeeperError & { readonly code: C } {
  return error instanceof ZooKeeperError && (code === undefined || error.code === code);
}
