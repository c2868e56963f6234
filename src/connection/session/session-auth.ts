import { performance } from 'node:perf_hooks';
import type { Reader } from '../../protocol/index.js';
import {
  OpCode,
  Writer,
  Xid,
  ZooKeeperError,
  writeAuth,
  writeSaslRequest,
  writeRequestHeader,
} from '../../protocol/index.js';
import type { Connection } from '../socket/connection.js';
import type { SaslOptions } from './sasl.js';
import { DigestMd5Client } from './sasl.js';
import { RequestPipeline, relocated } from './request-pipeline.js';
import type { AuthEntry } from './session-core.js';

/** Credentials of a Session: addAuth entries re-sent on every connection, the SASL exchange, and the end of the client on a refusal. */
export abstract class SessionAuth extends RequestPipeline {
  /**
   * Digest or other auth; kept and re-sent on every reconnect. Resolves when a server accepted it.
   * A refusal (AUTHFAILED: the server closes the connection) ends the client, as in Java: see
   * failAuthentication.
   */
  addAuth(scheme: string, auth: Buffer): Promise<void> {
    const refused = this.refusal({ type: OpCode.auth, op: 'addAuth' });
    if (refused) return Promise.reject(refused);
    const entry: AuthEntry = { scheme, auth, waiters: [] };
    this.authInfo.push(entry);
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        entry.waiters = entry.waiters.filter((w) => w.resolve !== done);
        reject(new ZooKeeperError('TIMEOUT', `no server accepted the auth within ${this.options.requestTimeout} ms`, { op: 'addAuth' }));
      }, this.options.requestTimeout);
      const done = (): void => {
        clearTimeout(timer);
        resolve();
      };
      entry.waiters.push({
        resolve: done,
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      if (this.ready && this.connection) {
        // Requests made before addAuth run without the identity, as they would have on the wire:
        // what waits for the pump goes out first. (Beyond maxInFlight, or while the socket is
        // full, the rest still waits and runs with it: the ordering holds only up to there.)
        this.pump();
        this.sendAuth(this.connection, entry);
      }
    });
  }

  protected sendAuth(connection: Connection, entry: AuthEntry): void {
    const w = new Writer(64);
    writeRequestHeader(w, Xid.auth, OpCode.auth);
    writeAuth(w, entry.scheme, entry.auth);
    this.authInFlight.push(entry);
    connection.send(w.frame());
  }

  protected onAuthReply(err: number): void {
    const entry = this.authInFlight.shift();
    if (!entry) return;
    if (err !== 0) {
      this.failAuthentication(authRefusal(this.connection, entry.scheme, err));
      return;
    }
    const waiters = entry.waiters;
    entry.waiters = [];
    for (const w of waiters) w.resolve();
    if (this.announcement && --this.announcement.authDue === 0) this.announce(this.announcement.event);
  }

  /**
   * The server refused credentials: it answered AUTHFAILED and closes the connection, and every
   * server would refuse them again (an unknown scheme, a scheme that needs what this connection
   * lacks, such as x509 without a client certificate). Carrying on without the identity would run
   * requests as someone else, so the client ends, as Java's goes to AUTH_FAILED: every request
   * waiting or in flight fails with AUTHFAILED (one sent before the credentials may have run, as
   * after a CONNECTIONLOSS; one sent after them did not: the server reads nothing more), no
   * `suspended`, no reconnect; `authFailed`, then `closed` with the reason, are emitted at once,
   * so a lease learns it is lost before its node can go. Then the session is ended on the server
   * over a connection of its own (its ephemeral nodes go now, not a session timeout later);
   * close() resolves once that is done.
   */
  protected failAuthentication(error: ZooKeeperError): void {
    if (this.endReason) return;
    this.endReason = error;
    this.authEnding = this.endAfterAuthFailure(error);
    // A close() under way (its closeSession went behind the credentials: the server never reads it)
    // finishes with this end instead of its own: see doClose.
    this.closing ??= this.authEnding;
  }

  private async endAfterAuthFailure(error: ZooKeeperError): Promise<void> {
    clearTimeout(this.expiryTimer);
    this.announcement = undefined;
    // Failed before the connection closes, which would fail them with CONNECTIONLOSS instead.
    this.failAll(error);
    this.rejectAuthWaiters(error);
    const session = this.sessionToEnd();
    const connection = this.connection;
    connection?.close(error);
    this.state = 'closed';
    this.emit('authFailed', error);
    this.emit('state', 'closed', error);
    this.emit('closed', error);
    await connection?.released;
    if (session) await this.endOnServer(session, performance.now() + this.connectTimeout());
  }

  protected startSasl(connection: Connection, options: SaslOptions, then: () => void): void {
    const mechanism = new DigestMd5Client(options);
    this.saslExchange = { mechanism, xid: 0, then };
    this.sendSasl(connection, mechanism.start());
  }

  private sendSasl(connection: Connection, token: Buffer): void {
    this.xid = this.nextXid();
    this.saslExchange!.xid = this.xid;
    const w = new Writer(token.length + 32);
    writeRequestHeader(w, this.xid, OpCode.sasl);
    writeSaslRequest(w, token);
    connection.send(w.frame());
  }

  /**
   * The server's answer to a SASL token (SetSASLResponse). A refusal (AUTHFAILED, or
   * SESSIONCLOSEDREQUIRESASLAUTH from a server that requires SASL) comes with the connection's
   * close, and ends the client as a refused addAuth does; so does a server that fails our check of it.
   */
  protected onSaslReply(connection: Connection, err: number, r: Reader): void {
    const exchange = this.saslExchange!;
    if (err !== 0) {
      this.saslExchange = undefined;
      this.failAuthentication(authRefusal(connection, 'sasl', err));
      return;
    }
    let next: Buffer | undefined;
    try {
      next = exchange.mechanism.step(r.buffer());
    } catch (error) {
      this.saslExchange = undefined;
      if (!(error instanceof ZooKeeperError)) throw error;
      this.failAuthentication(new ZooKeeperError(error.code, `server ${connection.label}: ${error.detail}; the client is closed`, { zkCode: error.zkCode, op: 'sasl' }));
      return;
    }
    if (next) {
      this.sendSasl(connection, next);
      return;
    }
    this.saslExchange = undefined;
    exchange.then();
  }

  protected rejectAuthWaiters(reason: ZooKeeperError): void {
    for (const entry of this.authInfo) {
      for (const w of entry.waiters) w.reject(relocated(reason, { op: 'addAuth' }));
      entry.waiters = [];
    }
  }
}

/** The server refused credentials for `scheme` with `err`, and closes the connection. */
export function authRefusal(connection: Connection | undefined, scheme: string, err: number, why = `refused the credentials for scheme "${scheme}"`): ZooKeeperError {
  const server = connection ? `server ${connection.label}` : 'the server';
  return new ZooKeeperError(ZooKeeperError.fromServer(err).code, `${server} ${why} and closed the connection; the client is closed`, {
    zkCode: err,
    op: scheme === 'sasl' ? 'sasl' : 'addAuth',
  });
}
