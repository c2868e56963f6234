import { OpCode, OversizedFrame, Reader, Writer, ZooKeeperError, readConnectResponse, writeConnectRequest, writeRequestHeader } from '../../protocol/index.js';
import { performance } from 'node:perf_hooks';
import type { HostPort } from '../hosts/connect-string.js';
import { Connection } from '../socket/connection.js';
import type { TlsOptions } from '../socket/transport.js';
import { openSocket } from '../socket/transport.js';

/** A session to end: what a handshake needs to take it over. */
export interface SessionToEnd {
  id: bigint;
  password: Buffer;
  lastZxid: bigint;
  timeout: number;
}

export interface EndSessionOptions {
  tls: TlsOptions | undefined;
  maxReplyBytes: number;
  /** Bounds the connect, the handshake and the closeSession round trip, all together. */
  timeoutMs: number;
}

/**
 * Sends closeSession on a connection whose handshake took over the session, and drops the
 * connection once it is answered (the server deletes the session's ephemeral nodes before it
 * answers) or at the deadline.
 */
export function sendCloseSession(connection: Connection, deadlineMs: number): void {
  const w = new Writer(16);
  writeRequestHeader(w, 1, OpCode.closeSession);
  connection.setDeadline(deadlineMs, 'closing a session');
  connection.send(w.frame());
}

/**
 * Ends a session over a connection of its own, without credentials (closeSession needs none):
 * for a session whose connection the server closed, or that close() found disconnected, so that
 * its ephemeral nodes go now rather than when the server expires it. Best effort: resolves, never
 * rejects, once the connection is gone: true when the server answered (it ended the session, or
 * reports it already expired: nothing is left to do), false when it could not be reached or did
 * not answer within the timeout (another server may).
 */
export async function endSession(target: HostPort, session: SessionToEnd, options: EndSessionOptions): Promise<boolean> {
  // One deadline for the three phases: a bound for each let a slow server take three times the
  // caller's (close() promises CLOSE_TIMEOUT_MS in all).
  const until = performance.now() + options.timeoutMs;
  const left = (): number => Math.max(1, Math.floor(until - performance.now()));
  let socket;
  try {
    socket = await openSocket(target, options.timeoutMs, options.tls, new AbortController().signal);
  } catch {
    return false;
  }
  const done = new ZooKeeperError('CLOSED', 'session ended');
  let released: Promise<void> | undefined;
  let answered = false;
  await new Promise<void>((resolve) => {
    let handshaken = false;
    const connection = new Connection(
      socket,
      {
        onFrame: (frame) => {
          // The reply to closeSession: the server deleted the session's ephemeral nodes before it.
          answered = handshaken;
          if (handshaken || frame instanceof OversizedFrame) return connection.close(done);
          handshaken = true;
          const response = readConnectResponse(new Reader(frame));
          answered = response.timeout <= 0;
          if (response.timeout <= 0 || response.sessionId !== session.id) return connection.close(done);
          sendCloseSession(connection, left());
        },
        onIdle: () => undefined,
        onWritable: () => undefined,
        onClose: () => resolve(),
      },
      options.maxReplyBytes,
      `${target.host}:${target.port}`,
    );
    released = connection.released;
    connection.setDeadline(left(), 'ending a session');
    const w = new Writer(64);
    writeConnectRequest(w, { lastZxidSeen: session.lastZxid, timeout: session.timeout, sessionId: session.id, password: session.password, readOnly: false });
    connection.send(w.frame());
  });
  await released;
  return answered;
}
