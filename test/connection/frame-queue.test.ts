import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FrameQueue } from '../../src/connection/socket/frame-queue.js';
import { Writer } from '../../src/protocol/index.js';

/** A request frame: xid 0 (written when taken), then `body`. */
function encode(w: Writer, body: Buffer): void {
  w.int(0).buffer(body);
}

/** The frames in `bytes`, as [xid, body] pairs. */
function parse(bytes: Buffer): [number, Buffer][] {
  const frames: [number, Buffer][] = [];
  for (let at = 0; at < bytes.length; ) {
    const length = bytes.readInt32BE(at);
    const bodyLength = bytes.readInt32BE(at + 8);
    frames.push([bytes.readInt32BE(at + 4), bytes.subarray(at + 12, at + 12 + bodyLength)]);
    at += 4 + length;
  }
  return frames;
}

describe('queued frames', () => {
  it('go out in order with their xids, small ones packed and written together, large ones as they are', () => {
    // The views handed out are kept as they are: later frames must never overwrite bytes given to the socket.
    const writes: Buffer[] = [];
    const queue = new FrameQueue((bytes) => writes.push(bytes));
    const w = new Writer(64);
    // Sizes around the chunk sizes (1 to 64 KiB), and some above the copy limit (16 KiB).
    const bodies = Array.from({ length: 3000 }, (_, i) => Buffer.alloc(i % 500 === 7 ? 40_000 : (i * 37) % 300, i % 251));
    const expected: [number, Buffer][] = [];
    let next = 0;
    let xid = 0;
    // Takes the frames before `end`, skipping every seventh (its request settled while queued).
    const drain = (end: number): void => {
      for (; next < end; next++) {
        if (next % 7 === 3) {
          queue.skip();
        } else {
          queue.take(++xid);
          expected.push([xid, bodies[next]!]);
        }
      }
      queue.flush();
    };
    for (const [i, body] of bodies.entries()) {
      encode(w, body);
      queue.push(w);
      // Leaves some queued across the pushes that follow, and the queue empty now and then.
      if (i % 101 === 100) drain(i % 2 === 0 ? i + 1 : i - 49);
    }
    drain(bodies.length);
    assert.deepEqual(writes.flatMap(parse), expected);
  });

  /** 1,000 small frames queued at once, then taken and written: about 30 KB. */
  function burst(queue: FrameQueue, w: Writer): void {
    for (let i = 0; i < 1000; i++) {
      encode(w, Buffer.from(`/some/path/${i}`));
      queue.push(w);
    }
    for (let xid = 1; xid <= 1000; xid++) queue.take(xid);
    queue.flush();
  }

  it('taken together are written together: a write per chunk, not per frame', () => {
    const writes: Buffer[] = [];
    const queue = new FrameQueue((bytes) => writes.push(bytes));
    burst(queue, new Writer(64));
    assert.equal(writes.flatMap(parse).length, 1000);
    // About 30 KB in chunks doubling from 1 KiB: five of them.
    assert.ok(writes.length <= 6, `${writes.length} writes`);
  });

  it('once drained keep no chunk grown while frames piled up: an idle session holds a few bytes, not 64 KiB', () => {
    const writes: Buffer[] = [];
    const queue = new FrameQueue((bytes) => writes.push(bytes));
    const w = new Writer(64);
    burst(queue, w);
    assert.ok(writes.at(-1)!.buffer.byteLength > 8192, 'the burst grew the chunks past the pool size');
    encode(w, Buffer.from('/after/the/burst'));
    queue.push(w);
    queue.take(1001);
    queue.flush();
    // A small chunk comes from Node's 8 KiB pool; the burst's last chunk would be 16 KiB or more.
    assert.ok(writes.at(-1)!.buffer.byteLength <= 8192, `the next frame went into a chunk of ${writes.at(-1)!.buffer.byteLength} bytes`);
  });
});
