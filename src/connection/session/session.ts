import { performance } from 'node:perf_hooks';
import type { DecodedFrame, WatcherEvent } from '../../protocol/index.js';
import {
  EMPTY_PASSWORD,
  OpCode,
  OversizedFrame,
  Reader,
  Writer,
  Xid,
  ZK_ERROR,
  ZooKeeperError,
  readReplyHeader,
  readWatcherEvent,
  writeRequestHeader,
} from '../../protocol/index.js';
import type { Connection } from '../socket/connection.js';
import { Fifo } from '../fifo.js';
import type { AnswerKind } from './liveness-proof.js';
import { Packet } from './packet.js';
import { DialLoop } from './dial-loop.js';
import { connectionLoss, relocated } from './request-pipeline.js';
import { authRefusal } from './session-auth.js';
import type { SessionEvent, SessionState } from './session-core.js';

export type { SessionEvent, SessionOptions, SessionState } from './session-core.js';

/**
 * How long close() may spend ending the session on the server (the session timeout when that is
 * shorter: the server has expired it by then). A closeSession round trip, or a connection, a
 * handshake and one, take milliseconds on a working server; the bound is for one that does not
 * answer, where a process closing on its way out must not wait a whole session timeout.
 */
export const CLOSE_TIMEOUT_MS = 2000;

/**
 * A ZooKeeper session over a succession of connections: the handshake, reconnection to the next
 * host within the session, request pipelining with FIFO reply matching, pings, auth and watch
 * re-registration, expiry (reported by a server, or concluded locally when no server was reachable
 * for the whole session timeout) and an orderly close.
 */
export class Session extends DialLoop {
  protected announce(event: SessionEvent): void {
    this.announcement = undefined;
    this.announced = this.sessionId;
    this.setState('connected', event);
    if (this.readOnly && this.connection && this.target) this.seeker.start(this.hosts.others(this.target));
  }

  /**
   * A reply over maxReplyBytes brings only its header, which is all that matching it, the zxid
   * and the liveness proof need: only its own request fails, the connection goes on.
   */
  protected onFrame(connection: Connection, frame: DecodedFrame): void {
    const r = new Reader(frame instanceof OversizedFrame ? frame.head : frame);
    const header = readReplyHeader(r);
    if (header.xid === Xid.notification) {
      // Watchers are called now, replies reach their callers through promises, a microtask or
      // more later (as many as the await chain has links). A watch event read behind a reply
      // waits until the event loop has turned, when the code awaiting that reply has run: else
      // `await getData(p, { watch }); dirty = false` runs after the watcher it set, and loses the
      // change. So does one read while older requests are still being failed. The frames behind
      // it wait too, so that no later reply overtakes it.
      if (this.repliesUnseen || this.backlog.busy) {
        connection.deferFrame();
        return;
      }
      // Only once handled: a zxid passed to setWatches tells the server what not to fire again.
      if (header.zxid > this.lastZxid) this.lastZxid = header.zxid;
      this.emit('notification', readWatcherEvent(r) satisfies WatcherEvent);
      return;
    }
    if (header.zxid > this.lastZxid) this.lastZxid = header.zxid;
    if (this.saslExchange && header.xid === this.saslExchange.xid) {
      this.onSaslReply(connection, header.err, r);
      return;
    }
    // A server that requires SASL (sessionRequireClientSASLAuth) answers this to whatever a client
    // that did not authenticate asks (a ping included), and closes the connection: every server
    // of the ensemble would do so again, so the client ends, as for refused credentials.
    if (header.err === ZK_ERROR.SESSIONCLOSEDREQUIRESASLAUTH) {
      this.failAuthentication(authRefusal(connection, 'sasl', header.err, 'requires SASL authentication of every client'));
      return;
    }
    switch (header.xid) {
      case Xid.ping: {
        const sentAt = this.pingsSentAt.shift();
        if (sentAt !== undefined) this.liveness.onAnswer(sentAt, performance.now(), 'plain');
        return;
      }
      case Xid.auth:
        this.onAuthReply(header.err);
        return;
      case Xid.setWatches:
        if (header.err !== 0) this.emit('connectionError', ZooKeeperError.fromServer(header.err, 'setWatches'));
        return;
    }
    const packet = this.outstanding.peek();
    if (!packet || packet.xid !== header.xid) {
      throw new ZooKeeperError('PROTOCOL_ERROR', `reply xid ${header.xid} does not match the oldest request (${packet?.xid ?? 'none'})`);
    }
    this.outstanding.shift();
    if (this.pending.waiting > 0) this.schedulePump();
    this.liveness.onAnswer(packet.sentAt!, performance.now(), answerKind(packet.type, header.err));
    if (packet.settled) return;
    if (!this.repliesUnseen) {
      this.repliesUnseen = true;
      setImmediate(this.repliesSeen);
    }
    packet.onReply?.(header.err, header.xid);
    if (header.err === ZK_ERROR.UNKNOWNSESSION && !this.isClosing) {
      // The server no longer knows our session (another connection closed it, and this request
      // came after): it is over, as when a handshake reports it expired. Every request fails
      // with SESSIONEXPIRED, not a code nobody handles, and a new session is made when renewed.
      const reason = new ZooKeeperError('SESSIONEXPIRED', `server ${connection.label} no longer knows the session`, { zkCode: header.err });
      packet.fail(relocated(reason, { op: packet.op, path: packet.path }));
      this.expire(reason);
      connection.close(new ZooKeeperError('CONNECTIONLOSS', 'session expired', { zkCode: -4 }));
      return;
    }
    if (header.err !== 0) {
      // exists' NONODE is its answer for a missing node (with the watch set, as for any answer), not a failure: no error is built for it.
      if (header.err === ZK_ERROR.NONODE && packet.type === OpCode.exists) packet.succeed(null);
      else packet.fail(ZooKeeperError.fromServer(header.err, packet.op, packet.path));
      return;
    }
    if (frame instanceof OversizedFrame) {
      packet.fail(
        new ZooKeeperError(
          'REPLY_TOO_LARGE',
          `reply of ${frame.length} bytes exceeds maxReplyBytes (${this.options.maxReplyBytes}); the server ran the request (and set any watch it asked for) but its result was skipped: raise the client option maxReplyBytes to read it`,
          { op: packet.op, path: packet.path },
        ),
      );
      return;
    }
    try {
      packet.succeed(packet.read ? packet.read(r) : undefined);
    } catch (error) {
      packet.fail(error);
      throw error;
    }
  }

  protected onConnectionClosed(connection: Connection, reason: ZooKeeperError, established: boolean): void {
    if (this.connection === connection) {
      this.connection = undefined;
      this.ready = false;
    }
    this.disconnectedAt ??= performance.now();
    this.pingsSentAt = new Fifo();
    this.authInFlight = new Fifo();
    this.saslExchange = undefined;
    this.announcement = undefined;
    this.seeker.stop();
    this.liveness.onConnectionLost();
    // Everything asked before the loss of a session's connection and not answered fails, as in
    // Java: those in flight (their outcome unknown), and those still waiting to be written behind
    // them (not run). Only what is asked from now on waits for the next connection: what ran is a
    // prefix of what was asked, never a prefix and then a tail the next connection ran.
    // Requests asked while no connection was up wait through failed attempts (nothing was written).
    const lost = this.outstanding;
    this.outstanding = new Fifo();
    this.backlog.fail(lost, connectionLoss(reason, 'the outcome of the request is unknown'));
    if (established) this.backlog.fail(this.pending.takeAll(), connectionLoss(reason, 'the request was not sent'));
    if (this.isStopped) return;
    if (this.waitTimer === undefined) this.enforceWaitBound();
    // A planned move only for a provisional session: one a read-only server resumed (3.8's refuses
    // to, ReadOnlyZooKeeperServer.validateSession) is a real one, and its loss is a suspension with
    // the expiry clock running, whichever server comes next.
    if (this.rwTarget && this.provisional) {
      if (established && this.state === 'connected') this.setState('connecting', 'connecting', reason);
      return;
    }
    this.emit('connectionError', reason);
    if (established && this.state === 'connected') this.setState('suspended', 'suspended', reason);
    // Also when a handshake made while suspended lost its connection before its credentials were
    // answered: the handshake cleared the timer. Not for a provisional session: nothing to expire.
    if (established && this.state === 'suspended' && !this.provisional) {
      // With no server reachable for a whole session timeout, the session is gone (or will be before we can reach a server).
      this.expiryTimer = setTimeout(
        () =>
          this.expire(
            new ZooKeeperError('SESSIONEXPIRED', `no server reachable for the session timeout (${this.negotiatedTimeout} ms)`, {
              zkCode: -112,
            }),
          ),
        this.negotiatedTimeout,
      );
    }
  }

  protected expire(reason: ZooKeeperError): void {
    clearTimeout(this.expiryTimer);
    this.sessionId = 0n;
    this.password = EMPTY_PASSWORD;
    // The next session starts from zxid 0, as a new Java handle does (kazoo's _reset too): a
    // server refuses a handshake that has seen a newer zxid than its own, which for a new session
    // (a server restarted with empty data) nothing would ever answer.
    this.lastZxid = 0n;
    this.failAll(reason);
    // No session will come to accept them: they would wait out their timeout for nothing.
    if (!this.options.renewExpiredSession) this.rejectAuthWaiters(reason);
    this.setState('expired', 'expired', reason);
    if (!this.options.renewExpiredSession) this.connection?.close(reason);
  }

  private setState(state: SessionState, event: SessionEvent, reason?: ZooKeeperError): void {
    this.state = state;
    this.emit('state', event, reason);
    this.emit(event, reason);
  }

  /**
   * Ends the session on the server (its ephemeral nodes go at once), then drops the connection.
   * Requests still waiting fail with CLOSED. Leaves no timer or socket behind. Without a working
   * connection (a brief disconnect; or the closeSession sent went unanswered within half the
   * bound) the session is ended over a connection of its own, the last server first, then the others, each for at most a
   * connect timeout; all of it within CLOSE_TIMEOUT_MS. When none answers, close() resolves all
   * the same and the ephemeral nodes stay until the server expires the session.
   */
  close(): Promise<void> {
    this.closing ??= this.doClose();
    return this.closing;
  }

  private async doClose(): Promise<void> {
    if (this.state === 'closed') return;
    const closeTimeout = Math.min(this.negotiatedTimeout || this.options.sessionTimeout, CLOSE_TIMEOUT_MS);
    const deadline = performance.now() + closeTimeout;
    let ended = false;
    if (this.ready && this.connection && this.sessionId !== 0n) {
      const connection = this.connection;
      // What was asked before close() goes out first, as far as maxInFlight lets it: the rest
      // fails below with CLOSED, unsent, after the replies to what went out (in order).
      this.pump();
      const w = new Writer(16);
      writeRequestHeader(w, 0, OpCode.closeSession);
      const frame = w.frame();
      // Half the bound: a connection can look up and be silent (a half-open one, its read
      // deadline still ahead). Waiting out the whole bound on it left no time for a connection
      // of our own, and the session's nodes stayed although the server was there to end it.
      const answerWithin = closeTimeout / 2;
      ended = await new Promise<boolean>((resolve) => {
        frame.writeInt32BE(this.nextXid(), 4);
        const packet = new Packet<void>({ type: OpCode.closeSession, op: 'close', timeout: answerWithin }, () => resolve(true), () => resolve(false));
        this.markSent(packet as Packet, performance.now());
        connection.send(frame);
      });
    }
    // The server refused credentials meanwhile: the client has ended (closed emitted, with the reason) or is ending.
    if (this.authEnding) return this.authEnding;
    const unended = ended ? undefined : this.sessionToEnd();
    clearTimeout(this.expiryTimer);
    this.state = 'closed';
    this.stopping.abort();
    this.wake?.();
    const connection = this.connection;
    const closed = new ZooKeeperError('CLOSED', 'client closed');
    connection?.close(closed);
    this.failAll(closed);
    this.rejectAuthWaiters(new ZooKeeperError('CLOSED', 'client closed', { op: 'addAuth' }));
    await connection?.released;
    if (unended) await this.endOnServer(unended, deadline);
    await this.backlog.idle();
    this.emit('state', 'closed');
    this.emit('closed');
  }
}

/** Writes the leader runs only for a live session, and whose reply header tells whether they ran (not multi's). */
const SESSION_CHECKED_WRITES: ReadonlySet<number> = new Set([
  OpCode.create,
  OpCode.create2,
  OpCode.createTTL,
  OpCode.createContainer,
  OpCode.delete,
  OpCode.setData,
  OpCode.setACL,
]);

function answerKind(type: number, err: number): AnswerKind {
  if (type === OpCode.sync) return err === 0 ? 'sync' : 'failedSync';
  return err === 0 && SESSION_CHECKED_WRITES.has(type) ? 'write' : 'plain';
}
