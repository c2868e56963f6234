import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { DecodedFrame } from '../../protocol/index.js';
import { FrameDecoder, OversizedFrame, ZooKeeperError } from '../../protocol/index.js';
import { Fifo } from '../fifo.js';
import { takeReads } from './transport.js';

export interface ConnectionHandlers {
  /** A frame, or the head of one over the reply limit, whose body was skipped; it may ask for it again later (see deferFrame). */
  onFrame(frame: DecodedFrame): void;
  /** Nothing has been sent for the ping interval. */
  onIdle(): void;
  /** Called once, whatever ended the connection: after every frame read before the socket ended was handled. */
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
 * Everything written in one tick goes out in one system call: the buffers sent are held until the
 * microtasks of the tick, then written together (writev), each as it is: nothing is copied into
 * one buffer first. A silent server (half-open TCP, paused process) is declared dead after
 * the read timeout even though the socket looks open.
 *
 * Frames are handled in the order read, each once, unless the handler defers one (deferFrame):
 * then it and every frame after it wait for the next turn of the event loop. A socket that ends
 * (the server closed it, a reset) is reported only after the frames read before are handled: a
 * reply that came in is never lost to the connection's end.
 */
export class Connection {
  private readonly decoder: FrameDecoder;
  /** Buffers sent in this tick and their bytes, written at its end (see send). */
  private outgoing: Buffer[] = [];
  private outgoingBytes = 0;
  private readonly flush = (): void => {
    const outgoing = this.outgoing;
    const wasWritable = this.writable;
    this.outgoingBytes = 0;
    if (this.closed) {
      this.outgoing = [];
      return;
    }
    // One buffer, the common case (the session packs a tick's requests into one), goes to the
    // socket as it is: corking it would only add the stream's buffering of it and its release.
    if (outgoing.length === 1) this.socket.write(outgoing.pop()!);
    else {
      this.outgoing = [];
      this.socket.cork();
      for (const bytes of outgoing) this.socket.write(bytes);
      this.socket.uncork();
    }
    // The bytes held here made the connection unwritable, and the socket took them at once: it
    // emits no 'drain' for a write it finished synchronously, so the writer hears it here. (While
    // the socket still holds more than WRITE_BUFFER_BYTES, above its high-water mark, its 'drain' will come.)
    if (!wasWritable && this.writable) this.handlers.onWritable();
  };
  private timer: NodeJS.Timeout | undefined;
  private pingIntervalMs = 0;
  private readTimeoutMs = 0;
  /** No more writes: the socket is gone, or going. */
  private closed = false;
  /** Why the connection ended, once it has; handlers.onClose hears it once the frames before are handled. */
  private endReason: ZooKeeperError | undefined;
  private reported = false;
  /** Frames read and not yet handled, oldest first. */
  private inbox = new Fifo<DecodedFrame>();
  /** Set by deferFrame: the head of the inbox waits for the next turn of the event loop. */
  private deferred = false;
  private readonly resume = (): void => {
    this.deferred = false;
    this.handleFrames();
  };
  lastSentAt = performance.now();
  lastReceivedAt = performance.now();
  /**
   * When the first frame sent since the last receipt was written, undefined while nothing was:
   * the server can be expected to speak only once asked. Unset by every receipt.
   */
  private firstSentSinceReceipt: number | undefined;
  /** Resolves once the socket has released its handle. */
  readonly released: Promise<void>;

  constructor(
    private readonly socket: Socket,
    private readonly handlers: ConnectionHandlers,
    maxReplyBytes: number,
    readonly label: string,
  ) {
    this.decoder = new FrameDecoder(maxReplyBytes);
    this.released = new Promise((resolve) => socket.once('close', () => resolve()));
    // A socket opened by openSocket over plain TCP lends each read's bytes (see takeReads); any other emits its own.
    if (!takeReads(socket, (bytes) => this.onData(bytes, true))) socket.on('data', (chunk: Buffer) => this.onData(chunk, false));
    socket.on('error', (cause: Error) => this.end(lost(`socket error on ${label}`, cause)));
    socket.on('close', () => this.end(lost(`connection to ${label} closed by the server`)));
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
    if (this.outgoing.push(bytes) === 1) queueMicrotask(this.flush);
    this.outgoingBytes += bytes.length;
    this.lastSentAt = performance.now();
    this.firstSentSinceReceipt ??= this.lastSentAt;
  }

  /**
   * False while the socket holds more than WRITE_BUFFER_BYTES the kernel has not taken (a server
   * that stopped reading): stop writing requests until onWritable, rather than buffer them all
   * in the socket, where a connection loss would leave their outcome unknown (requests still in
   * the client fail as not sent).
   */
  get writable(): boolean {
    return !this.closed && this.socket.writableLength + this.outgoingBytes < WRITE_BUFFER_BYTES;
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

  /**
   * Bounds a phase (the handshake) before the liveness clock runs. Judged after the event loop
   * has read the socket, as the read deadline is (see scheduleTick): the answer that ends the
   * phase (and replaces this timer) may be waiting there after a stall.
   */
  setDeadline(ms: number, what: string): void {
    clearTimeout(this.timer);
    const timer = setTimeout(
      () =>
        setImmediate(() => {
          if (this.timer === timer) this.close(lost(`${what} timed out after ${ms} ms on ${this.label}`));
        }),
      ms,
    );
    this.timer = timer;
  }

  /**
   * Sends a ping when nothing was sent for the ping interval, and drops the connection when
   * nothing was received for the read timeout. Timers run before the event loop reads its
   * sockets: after a stall of the loop (a long computation, a GC pause), bytes that arrived
   * meanwhile are still unread when the deadline is judged here. So a deadline found passed is
   * judged again `afterRead`, once the loop has read what is waiting (an immediate runs after the
   * poll phase of the same turn): a healthy connection is not dropped for the process's own silence.
   *
   * Nor for the silence the process caused: a stall over the moment the ping was due leaves the
   * server unasked, with nothing to say. So the server is also given, from the first frame sent
   * since the last receipt, the round trip a ping sent on time gets (read timeout minus ping
   * interval): the ping that was due goes out first. Without a stall the ping leaves by
   * then anyway, so this deadline never passes later than the read timeout; after one, a dead
   * connection is found that round trip after the stall.
   */
  private scheduleTick(afterRead = false): void {
    if (this.closed) return;
    const now = performance.now();
    if (now >= this.lastSentAt + this.pingIntervalMs) this.handlers.onIdle();
    const answerWithin = this.readTimeoutMs - this.pingIntervalMs;
    const readDeadline = Math.max(this.lastReceivedAt + this.readTimeoutMs, (this.firstSentSinceReceipt ?? -Infinity) + answerWithin);
    if (now >= readDeadline) {
      if (!afterRead) {
        setImmediate(() => this.scheduleTick(true));
        return;
      }
      this.close(lost(`no data from ${this.label} for ${Math.round(now - this.lastReceivedAt)} ms (read timeout ${Math.round(this.readTimeoutMs)} ms)`));
      return;
    }
    const next = Math.min(readDeadline, this.lastSentAt + this.pingIntervalMs);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.scheduleTick(), Math.max(1, next - performance.now()));
  }

  /** `lent`: the bytes are the shared read buffer's, overwritten by the next read (see takeReads). */
  private onData(chunk: Buffer, lent: boolean): void {
    this.lastReceivedAt = performance.now();
    this.firstSentSinceReceipt = undefined;
    let frames: DecodedFrame[];
    try {
      frames = this.decoder.push(chunk);
    } catch (error) {
      this.close(asZooKeeperError(error));
      return;
    }
    for (const frame of frames) this.inbox.push(frame);
    if (!this.deferred) this.handleFrames();
    // Frames left for a later turn (deferred) must not be views of a buffer the next read
    // overwrites; the decoder already copies any frame that a read cut short. Rare: a watch
    // event read behind a reply, and the frames after it.
    if (lent && this.inbox.length > 0) this.inbox = ownCopies(this.inbox);
  }

  /**
   * Called by the handler of a frame that must not be handled yet: the frame, and every frame
   * after it, is handed over again once the event loop has turned, when every promise
   * continuation that the frames before it started has run.
   */
  deferFrame(): void {
    this.deferred = true;
  }

  private handleFrames(): void {
    for (let frame = this.inbox.peek(); frame && !this.reported; frame = this.inbox.peek()) {
      try {
        this.handlers.onFrame(frame);
      } catch (error) {
        this.close(asZooKeeperError(error));
        return;
      }
      if (this.deferred) {
        setImmediate(this.resume);
        return;
      }
      this.inbox.shift();
    }
    if (this.endReason) this.report();
  }

  /** Ends the connection at once: the frames not handled yet are dropped. Also after the socket ended with frames left to handle. */
  close(reason: ZooKeeperError): void {
    this.inbox = new Fifo();
    this.end(reason);
    this.report();
  }

  /** The socket ended or failed: reported once the frames read before are handled. */
  private end(reason: ZooKeeperError): void {
    if (this.endReason) return;
    this.endReason = reason;
    this.closed = true;
    clearTimeout(this.timer);
    this.socket.destroy();
    if (this.inbox.length === 0) this.report();
  }

  private report(): void {
    if (this.reported) return;
    this.reported = true;
    this.handlers.onClose(this.endReason!);
  }
}

/** The frames of `inbox` in buffers of their own (an oversized frame's head is one already); the earlier ones, copied before, are copied again: this is rare. */
function ownCopies(inbox: Fifo<DecodedFrame>): Fifo<DecodedFrame> {
  const copies = new Fifo<DecodedFrame>();
  for (let frame = inbox.shift(); frame; frame = inbox.shift()) copies.push(frame instanceof OversizedFrame ? frame : Buffer.from(frame));
  return copies;
}

function lost(message: string, cause?: unknown): ZooKeeperError {
  return new ZooKeeperError('CONNECTIONLOSS', message, { zkCode: -4, cause });
}

function asZooKeeperError(error: unknown): ZooKeeperError {
  if (error instanceof ZooKeeperError) return error;
  return new ZooKeeperError('PROTOCOL_ERROR', 'failed to handle a frame from the server', { cause: error });
}
