import { ZooKeeperError } from '../protocol/index.js';
import type { Reader, Writer } from '../protocol/index.js';
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
  /** Runs synchronously on the reply, before any later frame is handled (watch registration must not race the next notification). */
  onReply?(err: number): void;
  /** Reads the body of a successful reply. */
  read?(r: Reader): T;
  /** Bounds the whole request, in flight included. */
  signal?: AbortSignal | undefined;
  /** Bounds the whole request, in flight included (ms). Without it, only the wait for a connection is bounded. */
  timeout?: number | undefined;
}

/** A request on its way: queued for a connection, then awaiting its reply. */
export class Packet<T = unknown> {
  xid = 0;
  sentAt = 0;
  settled = false;
  /** Called once when the request settles (succeeds, fails, times out or is aborted). */
  onSettled: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly unsubscribeAbort: (() => void) | undefined;

  constructor(
    readonly spec: RequestSpec<T>,
    readonly frame: Buffer,
    private readonly resolveFn: (value: T) => void,
    private readonly rejectFn: (error: unknown) => void,
  ) {
    if (spec.timeout !== undefined) this.startTimer(spec.timeout);
    if (spec.signal) {
      const signal = spec.signal;
      this.unsubscribeAbort = onAbort(signal, () =>
        this.fail(new ZooKeeperError('ABORTED', 'request aborted', { op: spec.op, path: spec.path, cause: signal.reason })),
      );
    }
  }

  /** Bounds the wait for a connection when the caller gave no timeout of its own. */
  boundWait(defaultTimeoutMs: number): void {
    if (this.timer === undefined) this.startTimer(defaultTimeoutMs);
  }

  /** Once sent, a request without a timeout of its own is bounded by the connection's read deadline. */
  markSent(xid: number, now: number): void {
    this.xid = xid;
    this.sentAt = now;
    this.frame.writeInt32BE(xid, 4);
    if (this.spec.timeout === undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  private startTimer(ms: number): void {
    this.timer = setTimeout(
      () => this.fail(new ZooKeeperError('TIMEOUT', `no reply within ${ms} ms`, { op: this.spec.op, path: this.spec.path })),
      ms,
    );
  }

  succeed(value: T): void {
    if (this.settle()) this.resolveFn(value);
  }

  fail(error: unknown): void {
    if (this.settle()) this.rejectFn(error);
  }

  private settle(): boolean {
    if (this.settled) return false;
    this.settled = true;
    this.onSettled?.();
    clearTimeout(this.timer);
    this.unsubscribeAbort?.();
    return true;
  }
}
