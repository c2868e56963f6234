import { performance } from 'node:perf_hooks';
import type { SessionEvent, WatchEvent, ZooKeeperClient } from '../client/index.js';
import { ZooKeeperError } from '../client/index.js';
import type { LockLostReason } from './lock-error.js';
import { LockLostError } from './lock-error.js';
import { onSessionEvent } from './session-events.js';

export interface LeaseMonitorOptions {
  /**
   * How long before the session could have expired on the server to give the lock up while
   * disconnected (ms). Default: a tenth of the session timeout, at least 100 ms.
   */
  safetyMargin?: number;
}

/**
 * Watches what a lease depends on and aborts its signal when the lock is, or may be, lost:
 * the session expired, our node was deleted, the client closed, or the connection has been down
 * so long that the server may have expired the session (the session is certainly alive until the
 * newest acknowledged request's send time plus the negotiated timeout; we give up before that).
 */
export class LeaseMonitor {
  // The signal, and the error that is its reason, are made only when someone asks for the signal:
  // most leases are released without anyone looking, and an Error per release is costly.
  private controller: AbortController | undefined;
  private lost: { reason: LockLostReason; message: string } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** The node watch could not be set (connection lost): set it on the next reconnect. */
  private rewatch = false;
  private watching = false;
  private readonly unsubscribe: () => void;
  private readonly watcher = (event: WatchEvent): void => this.onNodeEvent(event);

  constructor(
    private readonly client: ZooKeeperClient,
    private readonly nodePath: string,
    private readonly owner: bigint,
    private readonly options: LeaseMonitorOptions = {},
  ) {
    this.unsubscribe = onSessionEvent(client, (event) => this.onSessionEvent(event));
    if (client.sessionId !== owner) this.lose('SESSION_EXPIRED', 'the session that created the node has ended');
    else if (client.state === 'suspended') this.armDisconnectTimer();
  }

  /**
   * The watch on our node is set when someone first looks (signal, held): a deletion nobody can
   * observe needs no request, and an uncontended acquire/release cycle stays at the server's
   * ceiling. A node already gone by then is reported at once (getData answers NONODE).
   */
  private observe(): void {
    if (this.watching) return;
    this.watching = true;
    this.watchNode();
  }

  get signal(): AbortSignal {
    this.observe();
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.lost) this.controller.abort(this.lostError(this.lost));
    }
    return this.controller.signal;
  }

  /** True once the lock is, or may be, lost (or released). */
  get isLost(): boolean {
    this.observe();
    return this.lost !== undefined;
  }

  private lostError(lost: { reason: LockLostReason; message: string }): LockLostError {
    return new LockLostError(lost.reason, this.nodePath, lost.message);
  }

  private watchNode(): void {
    if (this.stopped) return;
    this.client.getData(this.nodePath, { watch: this.watcher }).catch((error: unknown) => {
      if (this.stopped || !(error instanceof ZooKeeperError)) return;
      if (error.code === 'NONODE') this.lose('NODE_DELETED', 'our lock node no longer exists');
      // CONNECTIONLOSS: the state listener decides; the watch is set again on reconnect.
      else if (error.code === 'CONNECTIONLOSS' || error.code === 'TIMEOUT') {
        if (this.client.state === 'connected') this.watchNode();
        else this.rewatch = true;
      }
    });
  }

  private onNodeEvent(event: WatchEvent): void {
    if (this.stopped) return;
    if (event.type === 'deleted') this.onDeleted();
    else if (event.type === 'dataChanged' || event.type === 'created') this.watchNode();
  }

  /** Our own client.close() deletes the node too, and its deletion event may come before the 'closed' state. */
  private onDeleted(): void {
    if (this.client.closing) this.lose('CLIENT_CLOSED', 'the client was closed');
    else this.lose('NODE_DELETED', 'our lock node was deleted by someone else');
  }

  private onSessionEvent(event: SessionEvent): void {
    switch (event) {
      case 'suspended':
        this.armDisconnectTimer();
        break;
      case 'reconnected':
        clearTimeout(this.timer);
        if (this.rewatch) {
          this.rewatch = false;
          this.watchNode();
        }
        break;
      case 'expired':
      case 'connected':
        this.lose('SESSION_EXPIRED', 'the session expired; the server deleted our lock node');
        break;
      case 'closed':
        this.lose('CLIENT_CLOSED', 'the client was closed');
        break;
    }
  }

  private armDisconnectTimer(): void {
    clearTimeout(this.timer);
    const timeout = this.client.sessionTimeout;
    const margin = this.options.safetyMargin ?? Math.max(timeout / 10, 100);
    const giveUpAt = this.client.sessionAliveUntil() - margin;
    this.timer = setTimeout(
      () => this.lose('SESSION_MAY_HAVE_EXPIRED', `disconnected for so long that the server may have expired the session (timeout ${timeout} ms)`),
      Math.max(0, giveUpAt - performance.now()),
    );
  }

  private lose(reason: LockLostReason, message: string): void {
    if (this.lost) return;
    this.lost = { reason, message };
    this.controller?.abort(this.lostError(this.lost));
    this.detach();
  }

  /** The lease was released: abort with RELEASED and stop watching. */
  stop(): void {
    this.lose('RELEASED', 'the lease was released');
    this.stopped = true;
  }

  private detach(): void {
    clearTimeout(this.timer);
    this.unsubscribe();
  }
}
