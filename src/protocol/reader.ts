import { copyBytes } from './copy-bytes.js';
import { ZooKeeperError } from './zookeeper-error.js';

/** Longs whose high word is below this are below 2^53: exact as doubles. */
const SAFE_HIGH_WORDS = 0x20_0000;

/**
 * Bounds-checked big-endian jute decoder. Any inconsistency (a length past the end, a negative
 * count) throws PROTOCOL_ERROR: malformed server bytes must never crash the process or make it
 * allocate a huge buffer.
 */
export class Reader {
  private pos: number;

  constructor(
    private readonly buf: Buffer,
    offset = 0,
  ) {
    this.pos = offset;
  }

  private need(n: number, what: string): void {
    if (n < 0 || this.pos + n > this.buf.length) {
      throw new ZooKeeperError('PROTOCOL_ERROR', `malformed frame: ${what} needs ${n} bytes at offset ${this.pos} of ${this.buf.length}`);
    }
  }

  get remaining(): number {
    return this.buf.length - this.pos;
  }

  int(): number {
    this.need(4, 'int');
    const value = this.buf.readInt32BE(this.pos);
    this.pos += 4;
    return value;
  }

  long(): bigint {
    this.need(8, 'long');
    const high = this.buf.readInt32BE(this.pos);
    const low = this.buf.readUInt32BE(this.pos + 4);
    this.pos += 8;
    // A Stat holds four longs and a reply header one, zxids and session ids below 2^53 in
    // practice: for those, high·2^32 + low is an exact double, and BigInt of it the exact value,
    // one allocation where readBigInt64BE makes four; 0 (ephemeralOwner of most nodes) none.
    if (high >= 0 && high < SAFE_HIGH_WORDS) return high === 0 && low === 0 ? 0n : BigInt(high * 0x1_0000_0000 + low);
    return this.buf.readBigInt64BE(this.pos - 8);
  }

  /** A long known to hold a value within 2^53 (timestamps), read without a bigint. */
  longNumber(): number {
    this.need(8, 'long');
    const high = this.buf.readInt32BE(this.pos);
    const low = this.buf.readUInt32BE(this.pos + 4);
    this.pos += 8;
    return high * 0x1_0000_0000 + low;
  }

  bool(): boolean {
    this.need(1, 'boolean');
    return this.buf[this.pos++] !== 0;
  }

  string(): string {
    const length = this.int();
    if (length === -1) return '';
    this.need(length, 'string');
    const value = this.buf.toString('utf8', this.pos, this.pos + length);
    this.pos += length;
    return value;
  }

  /**
   * A jute buffer, copied: the frame may be a view of a read buffer that the next read
   * overwrites (see takeReads in connection/transport.ts), and a copy does not pin a socket chunk.
   */
  buffer(): Buffer | null {
    const length = this.int();
    if (length === -1) return null;
    this.need(length, 'buffer');
    const value = Buffer.allocUnsafe(length);
    copyBytes(this.buf, this.pos, value, 0, length);
    this.pos += length;
    return value;
  }

  /** A vector, with its count checked against the bytes left (each element takes at least `minElementBytes`). */
  vector<T>(readElement: (reader: Reader) => T, minElementBytes: number): T[] {
    const count = this.int();
    if (count === -1) return [];
    this.need(count * minElementBytes, 'vector');
    const items = new Array<T>(count);
    for (let i = 0; i < count; i++) items[i] = readElement(this);
    return items;
  }

  strings(): string[] {
    return this.vector((r) => r.string(), 4);
  }
}
