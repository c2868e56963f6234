import { MAX_FRAME_BYTES } from './opcodes.js';
import { ZooKeeperError } from './zookeeper-error.js';

/**
 * Splits a byte stream into length-prefixed frames. A length above the frame limit or below
 * zero is a protocol error: it is refused before anything is allocated for it.
 */
export class FrameDecoder {
  private pending: Buffer | null = null;

  constructor(private readonly maxFrameBytes = MAX_FRAME_BYTES) {}

  /** Feeds a chunk and returns every complete frame body it finishes, in order. */
  push(chunk: Buffer): Buffer[] {
    let data = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = null;
    const frames: Buffer[] = [];
    while (data.length >= 4) {
      const length = data.readInt32BE(0);
      if (length < 0 || length > this.maxFrameBytes) {
        throw new ZooKeeperError('PROTOCOL_ERROR', `frame length ${length} outside 0..${this.maxFrameBytes}`);
      }
      if (data.length < 4 + length) break;
      frames.push(data.subarray(4, 4 + length));
      data = data.subarray(4 + length);
    }
    if (data.length > 0) this.pending = data;
    return frames;
  }

  /** Bytes received that do not yet form a whole frame. */
  get buffered(): number {
    return this.pending?.length ?? 0;
  }
}
