import { performance } from 'node:perf_hooks';
import type { DecodedFrame, WatchLists } from '../../protocol/index.js';
import {
  EMPTY_PASSWORD,
  OversizedFrame,
  Reader,
  Writer,
  Xid,
  ZooKeeperError,
  readConnectResponse,
  readReplyHeader,
  writeConnectRequest,
  writeRequestHeader,
  setWatchesOpCode,
  writeSetWatches,
} from '../../protocol/index.js';
import type { HostPort } from '../hosts/connect-string.js';
import { Connection } from '../socket/connection.js';
import { sendCloseSession } from './end-session.js';
import { openSocket } from '../socket/transport.js';
import { SessionAuth } from './session-auth.js';
import type { SessionEvent } from './session-core.js';

/**
 * setWatches batches stay near the Java client's 128 KiB of paths, and within maxRequestBytes
 * less the record's fixed part (request header 8, relative zxid 8, five vector lengths 20): a
 * server whose jute.maxbuffer is below the batch drops the connection, and the reconnect that
 * follows sends the same batch again.
 */
const SET_WATCHES_BATCH_BYTES = 128 * 1024;
const SET_WATCHES_FIXED_BYTES = 36;

/** One connection of a Session: the handshake, then what goes before the queued requests (auth, setWatches), and its pings. */
export abstract class SessionHandshake extends SessionAuth {
  /** One connection attempt; resolves when that connection has ended, true if a session was established on it. */
  protected async connectOnce(target: HostPort): Promise<boolean> {
    let socket;
    try {
      socket = await openSocket(target, this.connectTimeout(), this.options.tls, this.stopping.signal);
    } catch (error) {
      // Nothing is reported after close().
      if (!this.isStopped) this.emit('connectionError', error);
      return false;
    }
    // Stopped, or the server left the list (updateHosts) while the socket was opening.
    if (this.isStopped || !this.hosts.has(target)) {
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

function emptyLists(): { [K in keyof WatchLists]: string[] } {
  return { data: [], exist: [], child: [], persistent: [], persistentRecursive: [] };
}
