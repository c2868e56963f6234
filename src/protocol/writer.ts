import { copyBytes } from './copy-bytes.js';

/**
 * Big-endian jute encoder into a growable buffer. The first 4 bytes are reserved for the
 * frame length so a finished request needs no second copy.
 */
export class Writer {
  private buf: Buffer;
  private pos = 4;
  private readonly initialSize: number;

  constructor(initialSize = 128) {
    this.initialSize = Math.max(initialSize, 16);
    this.buf = Buffer.allocUnsafe(this.initialSize);
  }

  private reserve(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  int(value: number): this {
    this.reserve(4);
    this.buf.writeInt32BE(value, this.pos);
    this.pos += 4;
    return this;
  }

  long(value: bigint | number): this {
    this.reserve(8);
    this.buf.writeBigInt64BE(BigInt(value), this.pos);
    this.pos += 8;
    return this;
  }

  bool(value: boolean): this {
    this.reserve(1);
    this.buf[this.pos++] = value ? 1 : 0;
    return this;
  }

  /** A jute ustring: length-prefixed UTF-8, -1 for null. */
  string(value: string | null): this {
    if (value === null) return this.int(-1);
    const length = Buffer.byteLength(value);
    this.int(length);
    this.reserve(length);
    this.pos += this.buf.write(value, this.pos, length, 'utf8');
    return this;
  }

  /** A jute buffer: length-prefixed bytes, -1 for null. */
  buffer(value: Uint8Array | null): this {
    if (value === null) return this.int(-1);
    this.int(value.length);
    this.reserve(value.length);
    this.buf.set(value, this.pos);
    this.pos += value.length;
    return this;
  }

  strings(values: readonly string[]): this {
    this.int(values.length);
    for (const value of values) this.string(value);
    return this;
  }

  /** Bytes written after the reserved length prefix. */
  get bodyLength(): number {
    return this.pos - 4;
  }

  /** The finished frame: the length prefix filled in, followed by everything written. */
  frame(): Buffer {
    this.buf.writeInt32BE(this.pos - 4, 0);
    return this.buf.subarray(0, this.pos);
  }

  // A writer reused frame after frame (a session's requests): no buffer, nor view of one, per frame.

  /** Bytes of the frame, its length prefix included. */
  get frameLength(): number {
    return this.pos;
  }

  /** Finishes the frame and copies it into `target` at `offset`. */
  copyFrame(target: Buffer, offset: number): void {
    this.buf.writeInt32BE(this.pos - 4, 0);
    copyBytes(this.buf, 0, target, offset, this.pos);
  }

  /** Finishes the frame and hands it over: the writer goes on in a buffer of its initial size. */
  take(): Buffer {
    const frame = this.frame();
    this.buf = Buffer.allocUnsafe(this.initialSize);
    this.pos = 4;
    return frame;
  }

  /** Starts the next frame in the same buffer. */
  reset(): void {
    this.pos = 4;
  }
}
