import { DEFAULT_MAX_REPLY_BYTES, FRAME_LENGTH_CEILING } from './frame-limits.js';
import { Xid } from './opcodes.js';
import { REPLY_HEADER_BYTES } from './records.js';
import { ZooKeeperError } from './zookeeper-error.js';

const LENGTH_BYTES = 4;

/**
 * A reply longer than the decoder's limit: only its first REPLY_HEADER_BYTES were kept (enough
 * to tell whose reply it is and how it went), the rest was read and thrown away.
 */
export class OversizedFrame {
  constructor(
    /** The frame's first REPLY_HEADER_BYTES bytes. */
    readonly head: Buffer,
    /** The frame's declared length (without its length prefix). */
    readonly length: number,
  ) {}
}

/** What one pushed chunk completes, in stream order. */
export type DecodedFrame = Buffer | OversizedFrame;

/**
 * Splits a byte stream into length-prefixed frames in time linear in the bytes, however the
 * stream is cut: a frame that lies within one chunk is handed out as a view of it, any other is
 * copied once into a buffer of its declared length as its pieces arrive.
 *
 * A frame longer than the limit costs the connection nothing: its head is kept, the rest is
 * skipped as it arrives, and it comes out as an {@link OversizedFrame} in its place, so that only
 * its request fails. A watch event (xid -1) is read whole whatever its length, though: skipped,
 * it would be lost for good (the watcher never called, a lock waiter waiting forever), and
 * dropping the connection to have it sent again does not work either, as the server sends the
 * same event again when the watches are set on the next connection: a reconnect loop (thousands
 * a second, measured). Its length is bounded by the server all the same: it is a path and 28
 * bytes, and every path came in a request within the server's jute.maxbuffer.
 *
 * A negative length, or one above FRAME_LENGTH_CEILING, is garbage: a PROTOCOL_ERROR, thrown
 * before anything is allocated for it.
 */
export class FrameDecoder {
  private readonly prefix = Buffer.alloc(LENGTH_BYTES);
  private prefixFilled = 0;
  /** The frame being assembled (for an oversized frame, its head), once its length is known. */
  private body: Buffer | undefined;
  private bodyFilled = 0;
  private declaredLength = 0;
  /** Bytes of an oversized frame still to come and be thrown away. */
  private skipping = 0;

  constructor(private readonly maxFrameBytes = DEFAULT_MAX_REPLY_BYTES) {
    if (!Number.isInteger(maxFrameBytes) || maxFrameBytes < REPLY_HEADER_BYTES || maxFrameBytes > FRAME_LENGTH_CEILING) {
      // A limit below the reply header would leave an oversized frame without a head to report.
      throw new ZooKeeperError('INVALID_ARGUMENT', `frame limit must be an integer in [${REPLY_HEADER_BYTES}, ${FRAME_LENGTH_CEILING}], got ${maxFrameBytes}`);
    }
  }

  /** Feeds a chunk and returns every frame it completes, in order. */
  push(chunk: Buffer): DecodedFrame[] {
    const frames: DecodedFrame[] = [];
    let at = 0;
    while (at < chunk.length) {
      if (this.skipping > 0) {
        const n = Math.min(this.skipping, chunk.length - at);
        this.skipping -= n;
        at += n;
        continue;
      }
      if (this.body === undefined) {
        if (this.prefixFilled === 0 && chunk.length - at >= LENGTH_BYTES) {
          this.declaredLength = chunk.readInt32BE(at);
          at += LENGTH_BYTES;
        } else {
          const n = Math.min(LENGTH_BYTES - this.prefixFilled, chunk.length - at);
          chunk.copy(this.prefix, this.prefixFilled, at, at + n);
          this.prefixFilled += n;
          at += n;
          if (this.prefixFilled < LENGTH_BYTES) break;
          this.prefixFilled = 0;
          this.declaredLength = this.prefix.readInt32BE(0);
        }
        const length = this.declaredLength;
        if (length < 0 || length > FRAME_LENGTH_CEILING) {
          throw new ZooKeeperError('PROTOCOL_ERROR', `frame length ${length} outside 0..${FRAME_LENGTH_CEILING}`);
        }
        const oversized = length > this.maxFrameBytes;
        if (!oversized && chunk.length - at >= length) {
          frames.push(chunk.subarray(at, at + length));
          at += length;
          continue;
        }
        // Every byte of it is written below before the frame is handed out.
        this.body = Buffer.allocUnsafe(oversized ? REPLY_HEADER_BYTES : length);
      }
      const n = Math.min(this.body.length - this.bodyFilled, chunk.length - at);
      chunk.copy(this.body, this.bodyFilled, at, at + n);
      this.bodyFilled += n;
      at += n;
      if (this.bodyFilled < this.body.length) continue;
      const frame = this.complete(this.body);
      if (frame) frames.push(frame);
    }
    return frames;
  }

  /** What a full body buffer yields: the frame, its stand-in, or nothing yet (a watch event, read on whole). */
  private complete(body: Buffer): DecodedFrame | undefined {
    const length = this.declaredLength;
    if (body.length < length && body.readInt32BE(0) === Xid.notification) {
      this.body = Buffer.allocUnsafe(length);
      body.copy(this.body);
      return undefined;
    }
    this.body = undefined;
    this.bodyFilled = 0;
    if (body.length === length) return body;
    this.skipping = length - body.length;
    return new OversizedFrame(body, length);
  }

  /** Bytes of the current, unfinished frame held in memory (an oversized frame's skipped bytes are not). */
  get buffered(): number {
    return this.prefixFilled + this.bodyFilled;
  }
}
