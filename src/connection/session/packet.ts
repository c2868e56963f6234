import { performance } from 'node:perf_hooks';
import { ZooKeeperError, withoutStack } from '../../protocol/index.js';
import type { Reader, Writer } from '../../protocol/index.js';
import { onAbort } from './abort-fanout.js';

/** What the client layer asks the session to send. */
export interface RequestSpec<T> {
  type: number;
  /** The operation's name, for errors. */
  op: string;
  /** The path as the user gave it, for errors. */
  path?: string | undefined;
  /** Writes the body after the request header. */
  write?(w: Writer): void;
  /** Runs synchronously on the reply, before any later frame is handled (watch registration must not race the next notification); `xid` is the reply's (for tracing). */
  onReply?: (err: number, xid: number) => void;
  /** Reads the body of a successful reply. */
  read?: (r: Reader) => T;
  /** Bounds the whole request, in flight included. */
  signal?: AbortSignal | undefined;
  /** Bounds the whole request, in flight included (ms). Without it, only the wait for a connection is bounded. */
  timeout?: number | undefined;
}

/** Told when a request settles (times out, is aborted) while it waits to be written. */
export interface PacketOwner {
  settledWhileQueued(packet: Packet): void;
}

/** What bounds a request besides the session: the caller's timeout and abort signal. */
interface Bounds {
  timer?: NodeJS.Timeout;
  unsubscribe?: () => void;
}

/**
 * A request on its way: queued, then in flight, then settled. A backlog holds one per request, so
 * it is kept small (a dozen fields): what the reply needs, copied from the spec (which goes, with
 * its write closure, once the frame is queued); no frame (see frame-queue.ts); no timer unless the
 * caller gave a timeout (the wait for a connection is bounded by one timer for the whole queue,
 * see Session); and its promise's resolvers only until it settles.
 */
export class Packet<T = unknown> {
  xid = 0;
  /** performance.now() when written. */
  sentAt: number | undefined = undefined;
  /** performance.now() when queued, in whole ms (a small integer, which V8 stores without a box). */
  readonly queuedAt = Math.ceil(performance.now());
  /** The queue holding it until it is written. */
  owner: PacketOwner | undefined = undefined;
  readonly type: number;
  readonly op: string;
  readonly path: string | undefined;
  readonly read: ((r: Reader) => T) | undefined;
  readonly onReply: ((err: number, xid: number) => void) | undefined;
  private bounds: Bounds | undefined = undefined;
  private resolveFn: ((value: T) => void) | undefined;
  private rejectFn: ((error: unknown) => void) | undefined;

  constructor(spec: RequestSpec<T>, resolve: (value: T) => void, reject: (error: unknown) => void) {
    this.type = spec.type;
    this.op = spec.op;
    this.path = spec.path;
    this.read = spec.read;
    this.onReply = spec.onReply;
    this.resolveFn = resolve;
    this.rejectFn = reject;
    const { timeout, signal } = spec;
    if (timeout === undefined && !signal) return;
    const bounds: Bounds = {};
    this.bounds = bounds;
    if (timeout !== undefined) {
      // Judged in an immediate, after the event loop has read its sockets: timers run first, so
      // after a stall of the loop a reply that came in time would still be unread (see Connection.scheduleTick).
      const expire = (): void => this.fail(withoutStack(() => new ZooKeeperError('TIMEOUT', `no reply within ${timeout} ms`, { op: this.op, path: this.path })));
      bounds.timer = setTimeout(() => setImmediate(expire), timeout);
    }
    if (signal) {
      bounds.unsubscribe = onAbort(signal, () =>
        this.fail(withoutStack(() => new ZooKeeperError('ABORTED', 'request aborted', { op: this.op, path: this.path, cause: signal.reason }))),
      );
    }
  }

  get settled(): boolean {
    return this.resolveFn === undefined;
  }

  /** Whether the caller bounded the whole request with a timeout (then the session's bound on the wait for a connection does not apply). */
  get hasTimeout(): boolean {
    return this.bounds?.timer !== undefined;
  }

  succeed(value: T): void {
    const resolve = this.resolveFn;
    if (!resolve) return;
    this.settle();
    resolve(value);
  }

  fail(error: unknown): void {
    const reject = this.rejectFn;
    if (!reject) return;
    this.settle();
    reject(error);
  }

  private settle(): void {
    this.resolveFn = undefined;
    this.rejectFn = undefined;
    if (this.bounds) {
      clearTimeout(this.bounds.timer);
      this.bounds.unsubscribe?.();
      this.bounds = undefined;
    }
    const owner = this.owner;
    this.owner = undefined;
    owner?.settledWhileQueued(this as Packet);
  }
}
