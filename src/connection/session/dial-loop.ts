import { performance } from 'node:perf_hooks';
import { ZooKeeperError } from '../../protocol/index.js';
import type { AddressBook } from '../hosts/addresses.js';
import { literalAddresses, resolveAddresses } from '../hosts/addresses.js';
import type { HostPort } from '../hosts/connect-string.js';
import type { SessionToEnd } from './end-session.js';
import { endSession } from './end-session.js';
import { SessionHandshake } from './handshake.js';

const MAX_BACKOFF_MS = 1000;

/** Host choice of a Session: the loop of connections with its back-off, moves between servers, and ending a session over a connection of its own. */
export abstract class DialLoop extends SessionHandshake {
  /** The session as a handshake can take it over to end it; none for a provisional one (it holds no ephemeral node, and only its read-only server knows it). */
  protected sessionToEnd(): SessionToEnd | undefined {
    if (this.sessionId === 0n || this.provisional) return undefined;
    return { id: this.sessionId, password: this.password, lastZxid: this.lastZxid, timeout: this.options.sessionTimeout };
  }

  /**
   * Ends `session` over a connection of its own (see endSession): the last server first, then
   * the others, each for at most a connect timeout, until one answers or `deadline` passes.
   */
  protected async endOnServer(session: SessionToEnd, deadline: number): Promise<void> {
    // A session was established, so on some connection: this.target is set.
    const last = this.target!;
    for (const target of [last, ...this.hosts.others(last)]) {
      const left = Math.floor(deadline - performance.now());
      if (left < 1) return;
      const timeoutMs = Math.min(this.connectTimeout(), left);
      if (await endSession(target, session, { tls: this.options.tls, maxReplyBytes: this.options.maxReplyBytes, timeoutMs })) return;
    }
  }

  // ---- the connection loop ----

  protected async run(): Promise<void> {
    let backoff = 50;
    while (!this.isStopped) {
      let established = false;
      const began = performance.now();
      try {
        const target = this.rwTarget ?? this.hosts.next();
        this.rwTarget = undefined;
        established = await this.connectOnce(target);
      } catch (error) {
        // Nothing may end this loop but close or a terminal expiry: a failure here would otherwise
        // be an unhandled rejection no caller can catch. Report it and try again after a back-off.
        this.emit('connectionError', error);
      }
      if (this.isStopped) return;
      // A connection that lasted is progress: after its loss, reconnect at once (so too when leaving
      // a read-only server for a read-write one). One dropped right after its handshake is not (a
      // server or proxy that accepts and then cuts every connection): reconnecting at once would
      // make a thousand connections a second, so it backs off.
      if (established && (performance.now() - began >= MAX_BACKOFF_MS || this.rwTarget)) {
        backoff = 50;
      } else if (established || this.hosts.endOfPass) {
        await this.sleep(backoff / 2 + Math.random() * (backoff / 2));
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /**
   * Bound on connecting and on the handshake. A share of the session timeout per host, as in the
   * Java client, but at most a third of it: an attempt whose bytes were lost must not use up the
   * whole session before the next one can start.
   */
  protected connectTimeout(): number {
    const timeout = this.negotiatedTimeout || this.options.sessionTimeout;
    return Math.max(Math.min(timeout / this.hosts.size, timeout / 3), 250);
  }

  /**
   * A new server list (the ensemble's membership changed): the session goes on, and leaves its
   * server when HostList.update says so, to spread the load as Java's client does; requests
   * in flight on that connection fail with CONNECTIONLOSS, as on any connection loss.
   */
  updateHosts(hosts: readonly HostPort[]): void {
    // Compared by address (a config names `127.0.0.1` the server the connect string called
    // `localhost`). Addresses only: at once; with a name, after one bounded lookup per update.
    // Applied in the order they were made (the old list serves meanwhile).
    if (this.hostUpdatesPending === 0) {
      const book = literalAddresses(this.hostsInvolved(hosts));
      if (book) return this.applyHosts(hosts, book);
    }
    this.hostUpdatesPending++;
    this.hostsUpdated = this.hostsUpdated
      .then(async () => {
        const involved = this.hostsInvolved(hosts);
        this.applyHosts(hosts, literalAddresses(involved) ?? (await resolveAddresses(involved, this.connectTimeout())));
      })
      .catch((error: unknown) => {
        this.emit('connectionError', error);
      })
      .finally(() => this.hostUpdatesPending--);
  }

  private hostsUpdated: Promise<void> = Promise.resolve();
  private hostUpdatesPending = 0;

  /** The hosts an update compares: the old list, the new one, and the server the session is on. */
  private hostsInvolved(hosts: readonly HostPort[]): HostPort[] {
    return [...this.hosts.all, ...hosts, ...(this.target ? [this.target] : [])];
  }

  private applyHosts(hosts: readonly HostPort[], book: AddressBook): void {
    if (this.isStopped) return;
    const connection = this.connection;
    // A connection still in its handshake counts too (as Java closes its socket whatever its state):
    // left alone, it would complete to a server no longer listed and stay there.
    const move = this.hosts.update(hosts, connection ? this.target : undefined, book);
    if (!move || !connection) return;
    connection.close(new ZooKeeperError('CONNECTIONLOSS', `leaving ${connection.label}: the server list changed (updateServerAddresses)`, { zkCode: -4 }));
  }

  /**
   * The seeker found a read/write server: leave the read-only one for it (as Java's
   * pingRwServer does). A planned move, so `connecting` rather than `suspended`; requests not
   * answered on the read-only connection fail with CONNECTIONLOSS, those made meanwhile wait.
   */
  protected moveToReadWrite(host: HostPort): void {
    const connection = this.connection;
    if (!connection || !this.ready || !this.readOnly || this.isStopped) return;
    this.rwTarget = host;
    connection.close(
      new ZooKeeperError('CONNECTIONLOSS', `leaving read-only server ${connection.label} for read/write server ${host.host}:${host.port}`, { zkCode: -4 }),
    );
  }
}
