import { errorName } from './error-codes.js';

/**
 * Codes zklock raises on its own, without a server reply. Server codes are the names in
 * {@link ERROR_NAMES} (`NONODE`, `NODEEXISTS`, `CONNECTIONLOSS`, ...).
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
  | 'CHROOT_MISSING';

export interface ZooKeeperErrorDetails {
  /** The numeric ZooKeeper code, when the error came from (or mirrors) a server code. */
  zkCode?: number | undefined;
  path?: string | undefined;
  /** The operation that failed, e.g. `getData`. */
  op?: string | undefined;
  cause?: unknown;
}

/** The one error type of the client: a stable string `code`, the numeric code, the path and the operation. */
export class ZooKeeperError extends Error {
  readonly code: string;
  readonly zkCode: number | undefined;
  readonly path: string | undefined;
  readonly op: string | undefined;

  constructor(code: string, message: string, details: ZooKeeperErrorDetails = {}) {
    const where = [details.op, details.path].filter(Boolean).join(' ');
    super(where ? `${code}: ${message} (${where})` : `${code}: ${message}`, { cause: details.cause });
    this.name = 'ZooKeeperError';
    this.code = code;
    this.zkCode = details.zkCode;
    this.path = details.path;
    this.op = details.op;
  }

  /** An error for a non-zero reply code from the server. */
  static fromServer(zkCode: number, op?: string, path?: string): ZooKeeperError {
    const code = errorName(zkCode);
    return new ZooKeeperError(code, describe(code), { zkCode, op, path });
  }
}

const DESCRIPTIONS: Record<string, string> = {
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

function describe(code: string): string {
  return DESCRIPTIONS[code] ?? 'server returned an error';
}

export function isZooKeeperError(error: unknown, code?: string): error is ZooKeeperError {
  return error instanceof ZooKeeperError && (code === undefined || error.code === code);
}
