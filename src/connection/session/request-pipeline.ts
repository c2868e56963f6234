import { performance } from 'node:perf_hooks';
import {
  OpCode,
  Writer,
  ZooKeeperError,
  writeRequestHeader,
  withoutStack,
} from '../../protocol/index.js';
import { Fifo } from '../fifo.js';
import type { RequestSpec } from './packet.js';
import { Packet } from './packet.js';
import { holdForBatch } from '../write-batching.js';
import { SessionCore } from './session-core.js';

/** Requests of a Session: encoded when asked, written in order under maxInFlight, bounded while no connection is up, failed together. */
export abstract class RequestPipeline extends SessionCore {
  request<T>(spec: RequestSpec<T>): Promise<T> {
    const refused = this.refusal(spec) ?? this.overload(spec);
    if (refused) return Promise.reject(refused);
    // The frame is encoded now, not when it goes out: the caller's buffers may change meanwhile.
    // Encoding may run the caller's code (a getter on an ACL it passed), which may call the client
    // again: that nested request gets a writer of its own, or it would overwrite this frame.
    const nested = this.encoding;
    const w = nested ? new Writer(64) : this.writer;
    this.encoding = true;
    try {
      w.reset();
      writeRequestHeader(w, 0, spec.type);
      spec.write?.(w);
    } finally {
      this.encoding = nested;
    }
    const bytes = w.bodyLength;
    const limit = this.options.maxRequestBytes;
    if (bytes > limit) {
      w.take(); // lets go of the buffer grown for it
      return Promise.reject(
        new ZooKeeperError(
          'DATA_TOO_LARGE',
          `request of ${bytes} bytes exceeds maxRequestBytes (${limit}); a server drops the connection of a request longer than its jute.maxbuffer`,
          { op: spec.op, path: spec.path },
        ),
      );
    }
    return new Promise<T>((resolve, reject) => {
      this.pending.push(new Packet<T>(spec, resolve, reject) as Packet, w);
      if (this.ready) this.schedulePump();
      else if (this.waitTimer === undefined) this.enforceWaitBound();
    });
  }

  /**
   * OVERLOADED when `maxQueued` requests would still wait once the free in-flight slots are
   * filled: the caller learns at once that it outruns the server, instead of piling up requests
   * until the process runs out of memory (a million queued requests took 1.3 GB before).
   */
  private overload(spec: RequestSpec<unknown>): ZooKeeperError | undefined {
    const free = this.ready ? Math.max(0, this.options.maxInFlight - this.outstanding.length) : 0;
    const waiting = this.pending.held - free;
    if (waiting < this.options.maxQueued) return undefined;
    return withoutStack(
      () => new ZooKeeperError('OVERLOADED', `${waiting} requests already wait to be sent (maxQueued ${this.options.maxQueued})`, { op: spec.op, path: spec.path }),
    );
  }

  protected refusal(spec: RequestSpec<unknown>): ZooKeeperError | undefined {
    // Where the request was made is built only for a refusal: this runs for every request.
    if (this.endReason) return relocated(this.endReason, whereOf(spec));
    if (this.closing || this.state === 'closed') return new ZooKeeperError('CLOSED', 'client is closed', whereOf(spec));
    if (this.state === 'expired' && !this.options.renewExpiredSession) {
      return new ZooKeeperError('SESSIONEXPIRED', 'session expired', { ...whereOf(spec), zkCode: -112 });
    }
    if (spec.signal?.aborted) return new ZooKeeperError('ABORTED', 'request aborted', { ...whereOf(spec), cause: spec.signal.reason });
    return undefined;
  }

  protected schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    queueMicrotask(this.pumpTask);
  }

  /**
   * Writes queued requests, in order, while fewer than maxInFlight await replies and the socket
   * takes more; called again by a reply, by the socket's 'drain' and by the end of a backlog. A
   * microtask after the requests of a tick, so that they go out in one write. `batching` (the
   * scheduled pump): deep in a pipeline, they may wait for more replies (see holdForBatch).
   */
  protected pump(batching = false): void {
    this.pumpScheduled = false;
    const connection = this.connection;
    // Not during close() (what remains fails, unsent) nor while older requests are still being failed.
    if (!this.ready || !connection || this.closing || this.backlog.busy) return;
    if (batching && holdForBatch(this.outstanding.length, this.pending.waiting)) return;
    const now = performance.now();
    while (this.outstanding.length < this.options.maxInFlight && connection.writable) {
      const packet = this.pending.takeNext(this.nextXid());
      if (!packet) break;
      this.markSent(packet, now);
    }
    this.pending.flush();
  }

  /** The xid the next request written gets (positive: the negative ones are the protocol's own). */
  protected nextXid(): number {
    return this.xid >= 0x7fffffff ? 1 : this.xid + 1;
  }

  /** Counts `packet`, just written with the next xid, as in flight. */
  protected markSent(packet: Packet, now: number): void {
    this.xid = this.nextXid();
    packet.xid = this.xid;
    packet.sentAt = now;
    if (packet.type === OpCode.sync) this.liveness.onSyncSent(now);
    this.outstanding.push(packet);
  }

  /**
   * Fails with TIMEOUT the queued requests that have waited for a connection for the request
   * timeout, counted from their call or from the loss of the connection, whichever came later;
   * then sets the one timer for the next of them. Requests with a timeout of their own are bound
   * by it instead. One timer for the whole queue instead of one per request: their deadlines
   * grow along the queue, so only the oldest one's needs a timer.
   */
  protected enforceWaitBound(): void {
    clearTimeout(this.waitTimer);
    this.waitTimer = undefined;
    const since = this.disconnectedAt;
    if (this.ready || since === undefined) return;
    const limit = this.options.requestTimeout;
    const now = performance.now();
    const expired = new Fifo<Packet>();
    for (let packet = this.pending.nextWaitBounded(); packet; packet = this.pending.nextWaitBounded()) {
      const deadline = Math.max(packet.queuedAt, since) + limit;
      if (deadline > now) {
        this.waitTimer = setTimeout(this.waitTask, deadline - now);
        break;
      }
      expired.push(packet);
      this.pending.passWaitBounded();
    }
    this.backlog.fail(expired, (packet) =>
      withoutStack(() => new ZooKeeperError('TIMEOUT', `not sent: no connection within ${limit} ms`, { op: packet.op, path: packet.path })),
    );
  }

  /** Fails every request, in flight or queued, with an error like `reason` naming its own op and path. */
  protected failAll(reason: ZooKeeperError): void {
    // Nothing is left for the wait bound: its timer must not keep the process alive.
    clearTimeout(this.waitTimer);
    this.waitTimer = undefined;
    const inFlight = this.outstanding;
    this.outstanding = new Fifo();
    const error = (packet: Packet): ZooKeeperError =>
      withoutStack(() => relocated(reason, { op: packet.op, path: packet.path }));
    this.backlog.fail(inFlight, error);
    this.backlog.fail(this.pending.takeAll(), error);
  }
}

/** The CONNECTIONLOSS of a request the loss `reason` ended, saying what became of it. */
export function connectionLoss(reason: ZooKeeperError, outcome: string): (packet: Packet) => ZooKeeperError {
  // The detail, not the message: the new error adds its own code and op/path around it.
  const message = `${reason.detail}; ${outcome}`;
  return (packet) => withoutStack(() => new ZooKeeperError('CONNECTIONLOSS', message, { zkCode: -4, op: packet.op, path: packet.path, cause: reason }));
}

/** An error like `reason` (its code and words, it as the cause) told of another request. */
export function relocated(reason: ZooKeeperError, where: { op: string; path?: string }): ZooKeeperError {
  return new ZooKeeperError(reason.code, reason.detail, { ...where, zkCode: reason.zkCode, cause: reason });
}

function whereOf(spec: RequestSpec<unknown>): { op: string; path: string | undefined } {
  return { op: spec.op, path: spec.path };
}
