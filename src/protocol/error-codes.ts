/** ZooKeeper's numeric error codes (KeeperException.Code) and the stable names zklock reports. */
export const ERROR_NAMES: ReadonlyMap<number, string> = new Map([
  [0, 'OK'],
  [-1, 'SYSTEMERROR'],
  [-2, 'RUNTIMEINCONSISTENCY'],
  [-3, 'DATAINCONSISTENCY'],
  [-4, 'CONNECTIONLOSS'],
  [-5, 'MARSHALLINGERROR'],
  [-6, 'UNIMPLEMENTED'],
  [-7, 'OPERATIONTIMEOUT'],
  [-8, 'BADARGUMENTS'],
  [-12, 'UNKNOWNSESSION'],
  [-13, 'NEWCONFIGNOQUORUM'],
  [-14, 'RECONFIGINPROGRESS'],
  [-100, 'APIERROR'],
  [-101, 'NONODE'],
  [-102, 'NOAUTH'],
  [-103, 'BADVERSION'],
  [-108, 'NOCHILDRENFOREPHEMERALS'],
  [-110, 'NODEEXISTS'],
  [-111, 'NOTEMPTY'],
  [-112, 'SESSIONEXPIRED'],
  [-113, 'INVALIDCALLBACK'],
  [-114, 'INVALIDACL'],
  [-115, 'AUTHFAILED'],
  [-118, 'SESSIONMOVED'],
  [-119, 'NOTREADONLY'],
  [-120, 'EPHEMERALONLOCALSESSION'],
  [-121, 'NOWATCHER'],
  [-122, 'REQUESTTIMEOUT'],
  [-123, 'RECONFIGDISABLED'],
  [-124, 'SESSIONCLOSEDREQUIRESASLAUTH'],
  [-125, 'QUOTAEXCEEDED'],
  [-127, 'THROTTLEDOP'],
]);

export const ErrorCode = {
  OK: 0,
  RUNTIME_INCONSISTENCY: -2,
  CONNECTION_LOSS: -4,
  NO_NODE: -101,
  NODE_EXISTS: -110,
  SESSION_EXPIRED: -112,
  AUTH_FAILED: -115,
} as const;

export function errorName(code: number): string {
  return ERROR_NAMES.get(code) ?? `UNKNOWN(${code})`;
}
