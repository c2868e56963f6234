import type { Writer } from '../../protocol/index.js';
import { Fifo } from '../fifo.js';

/** The first chunk of a queue that was empty: an idle session keeps little. */
const MIN_CHUNK_BYTES = 1024;
/** Chunks double while frames pile up, to this: one write of up to this many bytes per chunk. */
const MAX_CHUNK_BYTES = 64 * 1024;
/** A frame larger than this is not copied: it is queued in the writer's own buffer. */
const OWN_CHUNK_BYTES = MAX_CHUNK_BYTES / 4;

/**
 * The frames of requests not yet written, oldest first, packed one after another into shared
 * chunks: a queued request costs its bytes and no Buffer object of its own. Frames leave at the
 * head: taken (written to the socket, consecutive ones of a chunk in one write, so no frame is
 * copied again) or skipped (its request settled while queued). A chunk is dropped once passed,
 * and freed once the socket is done with the bytes written from it.
 *
 * Frames carry xid 0 until taken: the xid is written in place as the frame goes out.
 */
export class FrameQueue {
  /** Filled chunks with unsent frames, oldest first, each a view ending at its last frame. */
  private chunks = new Fifo<Buffer>();
  /** The chunk being filled, after those; `tailEnd` bytes of it are used. */
  private tail: Buffer | undefined;
  private tailEnd = 0;
  /** Where the next frame starts in the first chunk (the tail when `chunks` is empty). */
  private head = 0;
  /** Where the frames taken and not yet handed to the sink start in the first chunk; -1 when none. */
  private runStart = -1;
  /** Frames queued and not yet taken or skipped. */
  private count = 0;

  /** `sink` writes bytes taken; called from take() (at the end of a chunk), skip() and flush(). */
  constructor(private readonly sink: (bytes: Buffer) => void) {}

  /** Queues the frame `w` holds, and leaves `w` ready for the next one. */
  push(w: Writer): void {
    const length = w.frameLength;
    if (length > OWN_CHUNK_BYTES) {
      this.closeTail();
      this.chunks.push(w.take());
    } else {
      if (!this.tail || this.tailEnd + length > this.tail.length) {
        // Doubling while frames pile up; small again for a queue that had drained.
        const size = this.count > 0 && this.tail ? Math.min(this.tail.length * 2, MAX_CHUNK_BYTES) : MIN_CHUNK_BYTES;
        this.closeTail();
        this.tail = Buffer.allocUnsafe(Math.max(size, length));
      }
      w.copyFrame(this.tail, this.tailEnd);
      this.tailEnd += length;
      w.reset();
    }
    this.count++;
  }

  /** Takes the head frame with `xid` written in: it goes to the sink with the frames taken after it from the same chunk. */
  take(xid: number): void {
    const chunk = this.first();
    chunk.writeInt32BE(xid, this.head + 4);
    if (this.runStart < 0) this.runStart = this.head;
    this.advance(chunk);
  }

  /** Drops the head frame unsent. */
  skip(): void {
    this.flush();
    this.advance(this.first());
  }

  /** Hands the frames taken so far to `sink`: one view of the chunk they are in. */
  flush(): void {
    if (this.runStart < 0) return;
    this.sink(this.first().subarray(this.runStart, this.head));
    this.runStart = -1;
    // Drained: a chunk grown while frames piled up (up to 64 KiB) is not kept by an idle session
    // (100 sessions of one process kept 1.6 MB so, measured). The socket keeps what it writes.
    if (this.count === 0 && this.chunks.length === 0 && this.tail && this.tail.length > MIN_CHUNK_BYTES) {
      this.tail = undefined;
      this.tailEnd = 0;
      this.head = 0;
    }
  }

  /** Drops every frame (their requests failed). */
  clear(): void {
    this.chunks = new Fifo();
    this.tail = undefined;
    this.tailEnd = 0;
    this.head = 0;
    this.runStart = -1;
    this.count = 0;
  }

  private first(): Buffer {
    return this.chunks.peek() ?? this.tail!;
  }

  /** Moves past the head frame; a filled chunk passed to its end is flushed and dropped. */
  private advance(chunk: Buffer): void {
    this.head += chunk.readInt32BE(this.head) + 4;
    this.count--;
    if (this.chunks.length === 0 || this.head < chunk.length) return;
    this.flush();
    this.chunks.shift();
    this.head = 0;
  }

  /** Files the chunk being filled among the filled ones, cut at its last frame; dropped instead if every frame in it is gone. */
  private closeTail(): void {
    if (!this.tail) return;
    if (this.chunks.length > 0 || this.head < this.tailEnd) this.chunks.push(this.tail.subarray(0, this.tailEnd));
    else this.head = 0;
    this.tail = undefined;
    this.tailEnd = 0;
  }
}
