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
  /** The socket has taken what it held when `writable` turned false. */
  onWritable(): void;
}

/**
 * Bytes the socket may hold, not yet taken by the kernel, before `writable` turns false. Above
 * the socket's high-water mark (16 KiB), so that the write that crosses it returns false and the
 * socket emits 'drain' once empty; a few round trips' worth of requests.
 */
const WRITE_BUFFER_BYTES = 256 * 1024;

/**
 * One socket to one server: frames in, batched writes out, and the liveness clock.
 * Everything written in one tick goes out in one system call: the socket is corked for the rest
 * of the tick, and its buffers are written together (writev), each as it is: nothing is copied
 * into one buffer first. A silent server (half-open TCP, paused process) is declared dead after
 * the read timeout even though the socket looks open.
 */
export class Connection {
  private readonly decoder: FrameDecoder;
  private corked = false;
  private readonly uncork = (): void => {
    this.corked = false;
    this.socket.uncork();
  };
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
    socket.on('drain', () => {
      if (!this.closed) this.handlers.onWritable();
    });
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Writes `bytes` (whole frames) with everything else written this tick. The caller lets go of them: the socket holds them until written. */
  send(bytes: Buffer): void {
    if (this.closed) return;
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      queueMicrotask(this.uncork);
    }
    this.socket.write(bytes);
    this.lastSentAt = performance.now();
  }

  /**
   * False while the socket holds more than WRITE_BUFFER_BYTES the kernel has not taken (a server
   * that stopped reading): stop writing requests until onWritable, rather than buffer them all
   * in the socket, where they could no longer wait for the next connection.
   */
  get writable(): boolean {
    return !this.closed && this.socket.writableLength < WRITE_BUFFER_BYTES;
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

  /**
   * Sends a ping when nothing was sent for the ping interval, and drops the connection when
   * nothing was received for the read timeout. Timers run before the event loop reads its
   * sockets: after a stall of the loop (a long computation, a GC pause), bytes that arrived
   * meanwhile are still unread when the deadline is judged here. So a deadline found passed is
   * judged again `afterRead`, once the loop has read what is waiting (an immediate runs after the
   * poll phase of the same turn): a healthy connection is not dropped for the process's own silence.
   */
  private scheduleTick(afterRead = false): void {
    if (this.closed) return;
    const now = performance.now();
    const readDeadline = this.lastReceivedAt + this.readTimeoutMs;
    if (now >= readDeadline) {
      if (!afterRead) {
        setImmediate(() => this.scheduleTick(true));
        return;
      }
      this.close(lost(`no data from ${this.label} for ${Math.round(now - this.lastReceivedAt)} ms (read timeout ${Math.round(this.readTimeoutMs)} ms)`));
      return;
    }
    if (now >= this.lastSentAt + this.pingIntervalMs) this.handlers.onIdle();
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
    this.socket.destroy();
    this.handlers.onClose(reason);
  }
}

function lost(message: string, cause?: unknown): ZooKeeperError {
  return new ZooKeeperError('CONNECTIONLOSS', message, { zkCode: -4, cause });
}

function asZooKeeperError(error: unknown): ZooKeeperError {
  if (error instanceof ZooKeeperError) return error;
  return new ZooKeeperError('PROTOCOL_ERROR', 'failed to handle a frame from the server', { cause: error });
}
