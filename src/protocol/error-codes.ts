/**
 * ZooKeeper's error codes (KeeperException.Code), keyed by the names zklock reports in
 * `ZooKeeperError.code`: the one table of server codes, which ServerErrorName is derived from.
 * Internal: applications see the names, and the number as `zkCode`.
 */
export const ZK_ERROR = {
  OK: 0,
  SYSTEMERROR: -1,
  RUNTIMEINCONSISTENCY: -2,
  DATAINCONSISTENCY: -3,
  CONNECTIONLOSS: -4,
  MARSHALLINGERROR: -5,
  UNIMPLEMENTED: -6,
  OPERATIONTIMEOUT: -7,
  BADARGUMENTS: -8,
  UNKNOWNSESSION: -12,
  NEWCONFIGNOQUORUM: -13,
  RECONFIGINPROGRESS: -14,
  APIERROR: -100,
  NONODE: -101,
  NOAUTH: -102,
  BADVERSION: -103,
  NOCHILDRENFOREPHEMERALS: -108,
  NODEEXISTS: -110,
  NOTEMPTY: -111,
  SESSIONEXPIRED: -112,
  INVALIDCALLBACK: -113,
  INVALIDACL: -114,
  AUTHFAILED: -115,
  SESSIONMOVED: -118,
  NOTREADONLY: -119,
  EPHEMERALONLOCALSESSION: -120,
  NOWATCHER: -121,
  REQUESTTIMEOUT: -122,
  RECONFIGDISABLED: -123,
  SESSIONCLOSEDREQUIRESASLAUTH: -124,
  QUOTAEXCEEDED: -125,
  THROTTLEDOP: -127,
} as const satisfies Record<string, number>;

/** The name of a server code this client knows (`NONODE`, `SESSIONEXPIRED`, ...). */
export type ServerErrorName = keyof typeof ZK_ERROR;

/** A server code's name; `UNKNOWN` for a number not in the table (a newer server's), kept in `zkCode`. */
export type ServerErrorCode = ServerErrorName | 'UNKNOWN';

// Object.entries widens the keys to string; they are the table's own.
const NAMES = new Map(Object.entries(ZK_ERROR).map(([name, code]) => [code as number, name as ServerErrorName]));

export function errorName(code: number): ServerErrorCode {
  return NAMES.get(code) ?? 'UNKNOWN';
}

/** The number of a server code's name, undefined for zklock's own codes. */
export function serverErrorNumber(code: string): number | undefined {
  return Object.hasOwn(ZK_ERROR, code) ? ZK_ERROR[code as ServerErrorName] : undefined;
}
