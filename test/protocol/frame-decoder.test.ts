import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { describe, it } from 'node:test';
import type { DecodedFrame } from '../../src/protocol/index.js';
import { FRAME_LENGTH_CEILING, FrameDecoder, Reader, Writer } from '../../src/protocol/index.js';
import { LOAD_SLACK_MS } from '../support/bounds.js';

const MIB = 1024 * 1024;

function frameOf(body: Buffer): Buffer {
  const frame = Buffer.allocUnsafe(4 + body.length);
  frame.writeInt32BE(body.length, 0);
  body.copy(frame, 4);
  return frame;
}

/** Every byte depends on its offset, so a byte copied to the wrong place shows. */
function patterned(length: number): Buffer {
  const body = Buffer.allocUnsafe(length);
  for (let i = 0; i < length; i++) body[i] = (i ^ (i >>> 8) ^ (i >>> 16)) & 0xff;
  return body;
}

/**
 * Pushes `stream` in `chunkBytes` pieces. A linear decoder does any case here in well under a
 * second; one that copies everything it holds again on every chunk needs far longer in the 1 KiB
 * and 1-byte cases (in 10 s, it got through 84% and 47% of them), and fails this bound instead of
 * hanging the run.
 */
function pushInChunks(decoder: FrameDecoder, stream: Buffer, chunkBytes: number, onPush?: () => void): DecodedFrame[] {
  const deadline = performance.now() + LOAD_SLACK_MS;
  const out: DecodedFrame[] = [];
  for (let at = 0; at < stream.length; at += chunkBytes) {
    out.push(...decoder.push(stream.subarray(at, at + chunkBytes)));
    onPush?.();
    if (performance.now() > deadline) {
      throw new Error(`decoding ${stream.length} bytes in ${chunkBytes}-byte chunks: only at byte ${at} after ${LOAD_SLACK_MS} ms`);
    }
  }
  return out;
}

function asBuffer(frame: DecodedFrame | undefined): Buffer {
  assert.ok(Buffer.isBuffer(frame), `expected a frame, got ${frame === undefined ? 'nothing' : `an oversized frame of ${frame.length} bytes`}`);
  return frame;
}

describe('FrameDecoder', () => {
  it('reassembles frames split at every byte boundary', () => {
    const frames = [Buffer.from('hello'), Buffer.alloc(0), Buffer.from('world!')].map((b) => {
      const w = new Writer();
      w.buffer(b);
      return w.frame();
    });
    const stream = Buffer.concat(frames);
    for (let cut = 0; cut <= stream.length; cut++) {
      const decoder = new FrameDecoder();
      const out = [...decoder.push(stream.subarray(0, cut)), ...decoder.push(stream.subarray(cut))];
      assert.deepEqual(
        out.map((f) => new Reader(asBuffer(f)).buffer()?.toString()),
        ['hello', '', 'world!'],
        `cut at ${cut}`,
      );
      assert.equal(decoder.buffered, 0);
    }
  });

  for (const { mib, chunkBytes } of [
    { mib: 16, chunkBytes: 64 * 1024 },
    { mib: 16, chunkBytes: 4093 },
    { mib: 16, chunkBytes: 1024 },
    { mib: 1, chunkBytes: 1 },
  ]) {
    it(`decodes a ${mib} MiB frame arriving in ${chunkBytes}-byte chunks, and the frame after it`, () => {
      const big = patterned(mib * MIB);
      const small = Buffer.from('next');
      const decoder = new FrameDecoder(big.length);
      const out = pushInChunks(decoder, Buffer.concat([frameOf(big), frameOf(small)]), chunkBytes);
      assert.equal(out.length, 2);
      assert.ok(asBuffer(out[0]).equals(big), 'the large frame differs from what was sent');
      assert.equal(asBuffer(out[1]).toString(), 'next');
      assert.equal(decoder.buffered, 0);
    });
  }

  it('hands out a frame that lies within one chunk as a view of it, not a copy', () => {
    const first = frameOf(patterned(10));
    const second = frameOf(Buffer.from('second'));
    const third = frameOf(Buffer.from('third'));
    const decoder = new FrameDecoder();
    assert.deepEqual(decoder.push(first.subarray(0, 7)), []);
    // Buffer.alloc never takes from the shared pool, where a copy could share the chunk's memory.
    const pieces = Buffer.concat([first.subarray(7), second, third]);
    const chunk = Buffer.alloc(pieces.length);
    pieces.copy(chunk);
    const [, secondOut, thirdOut] = decoder.push(chunk);
    for (const [frame, offset] of [
      [asBuffer(secondOut), 7 + 4],
      [asBuffer(thirdOut), 7 + second.length + 4],
    ] as const) {
      assert.ok(frame.buffer === chunk.buffer, 'frame copied out of its chunk');
      assert.equal(frame.byteOffset, chunk.byteOffset + offset);
    }
  });

  it('reports a frame over the limit once, with its head and length, skips the rest unbuffered and decodes the next, however it is cut', () => {
    const head = Buffer.from('00000007000000000000002a00000000', 'hex'); // xid 7, zxid 42, err 0
    const oversized = Buffer.concat([head, patterned(200)]);
    const next = frameOf(Buffer.from('after the big one'));
    const stream = Buffer.concat([frameOf(oversized), next]);
    const limit = 64;
    const check = (out: DecodedFrame[], what: string): void => {
      assert.equal(out.length, 2, what);
      const [skipped, after] = out;
      assert.ok(skipped !== undefined && !Buffer.isBuffer(skipped), `${what}: the oversized frame came out as a frame`);
      assert.ok(skipped.head.equals(head), what);
      assert.equal(skipped.length, oversized.length, what);
      assert.equal(asBuffer(after).toString(), 'after the big one', what);
    };
    for (let cut = 0; cut <= stream.length; cut++) {
      const decoder = new FrameDecoder(limit);
      check([...decoder.push(stream.subarray(0, cut)), ...decoder.push(stream.subarray(cut))], `cut at ${cut}`);
      assert.equal(decoder.buffered, 0);
    }
    const decoder = new FrameDecoder(limit);
    const out = pushInChunks(decoder, stream, 1, () => assert.ok(decoder.buffered <= limit, `${decoder.buffered} bytes buffered`));
    check(out, 'byte by byte');
  });

  it('reads a watch event (xid -1) over the limit whole, however it is cut: skipped, it would be lost for good', () => {
    const w = new Writer();
    w.int(-1).long(-1n).int(0).int(3).int(3).string(`/${'p'.repeat(200)}`);
    const event = w.frame();
    const stream = Buffer.concat([event, frameOf(Buffer.from('next'))]);
    for (let cut = 0; cut <= stream.length; cut++) {
      const decoder = new FrameDecoder(64);
      const out = [...decoder.push(stream.subarray(0, cut)), ...decoder.push(stream.subarray(cut))];
      assert.equal(out.length, 2, `cut at ${cut}`);
      assert.ok(asBuffer(out[0]).equals(event.subarray(4)), `cut at ${cut}`);
      assert.equal(asBuffer(out[1]).toString(), 'next', `cut at ${cut}`);
    }
  });

  it('skips a 16 MiB frame over a 64 KiB limit holding no more than its head', () => {
    const stream = Buffer.concat([frameOf(patterned(16 * MIB)), frameOf(Buffer.from('next'))]);
    const decoder = new FrameDecoder(64 * 1024);
    const out = pushInChunks(decoder, stream, 64 * 1024, () => assert.ok(decoder.buffered <= 16, `${decoder.buffered} bytes buffered`));
    assert.equal(out.length, 2);
    assert.ok(!Buffer.isBuffer(out[0]) && out[0]?.length === 16 * MIB);
    assert.equal(asBuffer(out[1]).toString(), 'next');
  });

  it('refuses a negative length and one above the ceiling (garbage, e.g. a TLS record) as a protocol error', () => {
    for (const length of [-1, -0x80000000, FRAME_LENGTH_CEILING + 1, 0x15030300]) {
      const prefix = Buffer.alloc(4);
      prefix.writeInt32BE(length);
      assert.throws(() => new FrameDecoder(1024).push(prefix), { code: 'PROTOCOL_ERROR' }, `length ${length}`);
    }
    const atCeiling = Buffer.alloc(4);
    atCeiling.writeInt32BE(FRAME_LENGTH_CEILING);
    assert.deepEqual(new FrameDecoder(1024).push(atCeiling), []);
  });

  it('refuses a limit that would not hold a reply header', () => {
    assert.throws(() => new FrameDecoder(15), { code: 'INVALID_ARGUMENT' });
    assert.throws(() => new FrameDecoder(FRAME_LENGTH_CEILING + 1), { code: 'INVALID_ARGUMENT' });
  });
});
