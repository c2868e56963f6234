import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  OpCode,
  Reader,
  Writer,
  readConnectResponse,
  readMultiResults,
  readReplyHeader,
  readStat,
  setWatchesOpCode,
  writeConnectRequest,
  writeMulti,
  writeSetWatches,
} from '../../src/protocol/index.js';

function body(frame: Buffer): Buffer {
  return frame.subarray(4);
}

describe('Writer and Reader', () => {
  it('round-trips every primitive big-endian', () => {
    const w = new Writer(4);
    w.int(-2).long(0x0102030405060708n).bool(true).string('päth').buffer(Buffer.from([9, 8])).string(null).buffer(null);
    const frame = w.frame();
    assert.equal(frame.readInt32BE(0), frame.length - 4);
    assert.deepEqual([...frame.subarray(4, 8)], [0xff, 0xff, 0xff, 0xfe]);
    const r = new Reader(body(frame));
    assert.equal(r.int(), -2);
    assert.equal(r.long(), 0x0102030405060708n);
    assert.equal(r.bool(), true);
    assert.equal(r.string(), 'päth');
    assert.deepEqual(r.buffer(), Buffer.from([9, 8]));
    assert.equal(r.int(), -1);
    assert.equal(r.buffer(), null);
    assert.equal(r.remaining, 0);
  });

  it('reads a timestamp long without bigint, negative ones included', () => {
    const w = new Writer();
    w.long(1_795_320_379_796n).long(-5n);
    const r = new Reader(body(w.frame()));
    assert.equal(r.longNumber(), 1_795_320_379_796);
    assert.equal(r.longNumber(), -5);
  });

  it('reads every long exactly, on both sides of 2^53 (below it, from a double) and negative ones', () => {
    const values = [0n, 1n, 0xffff_ffffn, 0x1_0000_0000n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n, 2n ** 63n - 1n, -1n, -(2n ** 32n), -(2n ** 63n)];
    const w = new Writer();
    for (const value of values) w.long(value);
    const r = new Reader(body(w.frame()));
    assert.deepEqual(values.map(() => r.long()), values);
  });

  it('reads a buffer as a copy of its own, small or large: the frame it came in may be overwritten', () => {
    for (const length of [0, 1, 16, 64, 65, 1000]) {
      const data = Buffer.alloc(length, 7);
      const frame = body(new Writer().buffer(data).frame());
      const read = new Reader(frame).buffer()!;
      frame.fill(0);
      assert.deepEqual(read, data, `${length} bytes`);
    }
  });

  it('refuses a string length past the end with PROTOCOL_ERROR', () => {
    const w = new Writer();
    w.int(1000).int(1);
    assert.throws(() => new Reader(body(w.frame())).string(), { code: 'PROTOCOL_ERROR' });
  });

  it('refuses a vector count that cannot fit in the bytes left, before allocating', () => {
    const w = new Writer();
    w.int(0x7fffffff);
    assert.throws(() => new Reader(body(w.frame())).strings(), { code: 'PROTOCOL_ERROR' });
  });
});

describe('records', () => {
  it('decodes the 68-byte Stat in field order', () => {
    const w = new Writer();
    w.long(1n).long(2n).long(3n).long(4n).int(5).int(6).int(7).long(8n).int(9).int(10).long(11n);
    assert.equal(w.bodyLength, 68);
    assert.deepEqual(readStat(new Reader(body(w.frame()))), {
      czxid: 1n,
      mzxid: 2n,
      ctime: 3,
      mtime: 4,
      version: 5,
      cversion: 6,
      aversion: 7,
      ephemeralOwner: 8n,
      dataLength: 9,
      numChildren: 10,
      pzxid: 11n,
    });
  });

  it('writes the ConnectRequest as the first, header-less frame', () => {
    const w = new Writer();
    writeConnectRequest(w, { lastZxidSeen: 7n, timeout: 4000, sessionId: 0n, password: Buffer.alloc(16), readOnly: false });
    const r = new Reader(body(w.frame()));
    assert.deepEqual([r.int(), r.long(), r.int(), r.long()], [0, 7n, 4000, 0n]);
    assert.deepEqual(r.buffer(), Buffer.alloc(16));
    assert.equal(r.bool(), false);
  });

  it('reads a ConnectResponse with or without the readOnly byte', () => {
    const w = new Writer();
    w.int(0).int(6000).long(0x1234n).buffer(Buffer.alloc(16, 1));
    const legacy = readConnectResponse(new Reader(body(w.frame())));
    assert.equal(legacy.readOnly, false);
    assert.equal(legacy.timeout, 6000);
    w.bool(true);
    assert.equal(readConnectResponse(new Reader(body(w.frame()))).readOnly, true);
  });
});

describe('multi', () => {
  it('encodes ops with headers and the closing marker', () => {
    const w = new Writer();
    writeMulti(w, [
      { type: 'check', path: '/a', version: 3 },
      { type: 'create', path: '/b', data: Buffer.from('x'), acl: [], flags: 4 },
    ]);
    const r = new Reader(body(w.frame()));
    assert.deepEqual([r.int(), r.bool(), r.int(), r.string(), r.int()], [OpCode.check, false, -1, '/a', 3]);
    assert.deepEqual([r.int(), r.bool(), r.int(), r.string()], [OpCode.createContainer, false, -1, '/b']);
    assert.deepEqual(r.buffer(), Buffer.from('x'));
    assert.deepEqual([r.int(), r.int()], [0, 4]);
    assert.deepEqual([r.int(), r.bool(), r.int()], [-1, true, -1]);
  });

  it('decodes a failed transaction as per-op error results', () => {
    const w = new Writer();
    for (const err of [0, -101, -2]) w.int(-1).bool(false).int(err).int(err);
    w.int(-1).bool(true).int(-1);
    const results = readMultiResults(new Reader(body(w.frame())));
    assert.deepEqual(
      results.map((r) => r.err),
      [0, -101, -2],
    );
  });

  it('refuses an unknown op type in a reply', () => {
    const w = new Writer();
    w.int(77).bool(false).int(0);
    assert.throws(() => readMultiResults(new Reader(body(w.frame()))), { code: 'PROTOCOL_ERROR' });
  });
});

describe('reply header', () => {
  it('reads a reply header', () => {
    const w = new Writer();
    w.int(5).long(99n).int(-110);
    assert.deepEqual(readReplyHeader(new Reader(body(w.frame()))), { xid: 5, zxid: 99n, err: -110 });
  });
});

describe('watch re-registration after a reconnect', () => {
  const hex = (text: string): Buffer => Buffer.from(text.replace(/\s+/g, ''), 'hex');
  // relativeZxid 0x0102030405060708, then the vectors: count, then (length, bytes) per path.
  const zxid = '0102030405060708';
  const dataA = '00000001 00000002 2f61'; // ['/a']
  const none = '00000000';
  const childB = '00000001 00000002 2f62'; // ['/b']

  function encode(lists: Parameters<typeof writeSetWatches>[2]): { op: number; bytes: Buffer } {
    const w = new Writer();
    writeSetWatches(w, 0x0102030405060708n, lists);
    return { op: setWatchesOpCode(lists), bytes: body(w.frame()) };
  }

  it('is SetWatches (101) with three lists when no persistent watch is registered, for 3.5 servers', () => {
    const { op, bytes } = encode({ data: ['/a'], exist: [], child: ['/b'], persistent: [], persistentRecursive: [] });
    assert.equal(op, 101);
    assert.deepEqual(bytes, hex(zxid + dataA + none + childB));
  });

  it('is SetWatches2 (105) with five lists when a persistent watch is registered', () => {
    const { op, bytes } = encode({ data: ['/a'], exist: [], child: [], persistent: [], persistentRecursive: ['/b'] });
    assert.equal(op, 105);
    assert.deepEqual(bytes, hex(zxid + dataA + none + none + none + childB));
  });
});
