import type net from 'node:net';
import { performance } from 'node:perf_hooks';
import type { DecodedFrame } from '../protocol/index.js';
import { FrameDecoder, ZooKeeperError } from '../protocol/index.js';

export interface ConnectionHandlers {
  /** A frame, or the head of one over the reply limit, whose body was skipped. */
  onFrame(frame: DecodedFrame): void;
  /** Nothing has been sent for the ping interval. */
  onIdle(): void;
  /** Called once, whatever ended the connection. */
  onClose(reason: ZooKeeperError): void;
}

/**
 * One socket to one server: frames in, coalesced writes out, and the liveness clock.
 * Requests written in the same tick go out in a single write; a silent server (half-open TCP,
 * paused process) is declared dead after the read timeout even though the socket looks open.
 */
export class Connection {
  private readonly decoder: FrameDecoder;
  private outgoing: Buffer[] = [];
  private flushScheduled = false;
  private timer: NodeJS.Timeout | undefined;
  private pingIntervalMs = 0;
  private readTimeoutMs = 0;
  private closed = false;
  lastSentAt = performance.now();
  lastReceivedAt = performance.now();
  /** Resolves once the socket has released its handle. */
  readonly released: Promise<void>;

  constructor(
    private readonly socket: net.Socket,
    private readonly handlers: ConnectionHandlers,
    maxReplyBytes: number,
    readonly label: string,
  ) {
    this.decoder = new FrameDecoder(maxReplyBytes);
    this.released = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (cause: Error) => this.close(lost(`socket error on ${label}`, cause)));
    socket.on('close', () => this.close(lost(`connection to ${label} closed by the server`)));
  }

  get isClosed(): boolean {
    return this.closed;
  }

  send(frame: Buffer): void {
    if (this.closed) return;
    this.outgoing.push(frame);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      queueMicrotask(() => this.flush());
    }
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.closed || this.outgoing.length === 0) return;
    const chunk = this.outgoing.length === 1 ? this.outgoing[0]! : Buffer.concat(this.outgoing);
    this.outgoing = [];
    this.socket.write(chunk);
    this.lastSentAt = performance.now();
  }

  /**
   * Starts pings and the read deadline for a negotiated session timeout: ping after a third of
   * it without sending, drop the connection after two thirds of it without receiving.
   */
  startLivenessClock(sessionTimeoutMs: number): void {
    this.readTimeoutMs = (sessionTimeoutMs * 2) / 3;
    this.pingIntervalMs = sessionTimeoutMs / 3;
    this.scheduleTick();
  }

  /** Bounds a phase (the handshake) before the liveness clock runs. */
  setDeadline(ms: number, what: string): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.close(lost(`${what} timed out after ${ms} ms on ${this.label}`)), ms);
  }

  private scheduleTick(): void {
    if (this.closed) return;
    const now = performance.now();
    const readDeadline = this.lastReceivedAt + this.readTimeoutMs;
    if (now >= readDeadline) {
      this.close(lost(`no data from ${this.label} for ${Math.round(now - this.lastReceivedAt)} ms (read timeout ${Math.round(this.readTimeoutMs)} ms)`));
      return;
    }
    if (now >= this.lastSentAt + this.pingIntervalMs) {
      this.handlers.onIdle();
      this.flush();
    }
    const next = Math.min(readDeadline, this.lastSentAt + this.pingIntervalMs);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.scheduleTick(), Math.max(1, next - performance.now()));
  }

  private onData(chunk: Buffer): void {
    this.lastReceivedAt = performance.now();
    let frames: DecodedFrame[];
    try {
      frames = this.decoder.push(chunk);
    } catch (error) {
      this.close(asZooKeeperError(error));
      return;
    }
    for (const frame of frames) {
      if (this.closed) return;
      try {
        this.handlers.onFrame(frame);
      } catch (error) {
        this.close(asZooKeeperError(error));
        return;
      }
    }
  }

  close(reason: ZooKeeperError): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    this.outgoing = [];
    this.socket.destroy();
    this.handlers.onClose(reason);
  }

  /** Writes what is queued, then half-closes; used after closeSession. */
  end(): void {
    this.flush();
    this.socket.end();
  }
}

function lost(message: string, cause?: unknown): ZooKeeperError {
  return new ZooKeeperError('CONNECTIONLOSS', message, { zkCode: -4, cause });
}

function asZooKeeperError(error: unknown): ZooKeeperError {
  if (error instanceof ZooKeeperError) return error;
  return new ZooKeeperError('PROTOCOL_ERROR', 'failed to handle a frame from the server', { cause: error });
}
