import type { Reader } from './reader.js';
import type { Writer } from './writer.js';

export interface ConnectRequest {
  lastZxidSeen: bigint;
  timeout: number;
  sessionId: bigint;
  password: Buffer;
  readOnly: boolean;
}

export interface ConnectResponse {
  protocolVersion: number;
  /** The negotiated session timeout in ms; 0 or less means the session has expired. */
  timeout: number;
  sessionId: bigint;
  password: Buffer;
  readOnly: boolean;
}

export const EMPTY_PASSWORD: Buffer = Buffer.alloc(16);

/** The first frame of a connection: a bare ConnectRequest with no request header. */
export function writeConnectRequest(w: Writer, req: ConnectRequest): void {
  w.int(0).long(req.lastZxidSeen).int(req.timeout).long(req.sessionId).buffer(req.password).bool(req.readOnly);
}

export function readConnectResponse(r: Reader): ConnectResponse {
  const protocolVersion = r.int();
  const timeout = r.int();
  const sessionId = r.long();
  const password = r.buffer() ?? EMPTY_PASSWORD;
  // Servers before 3.4 end the frame here.
  const readOnly = r.remaining > 0 ? r.bool() : false;
  return { protocolVersion, timeout, sessionId, password, readOnly };
}
