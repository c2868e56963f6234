import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { provenSole } from '../../src/recipes/queue/fast/sequence-proof.js';

describe('sequence proof of an uncontended re-acquire', () => {
  const prev = { seq: 41, czxid: 1000n };

  it('holds when the next create of the parent is ours and few transactions ran in between', () => {
    // Our delete and our create: two zxids on from the previous node.
    assert.equal(provenSole(prev, { seq: 42, czxid: 1002n }), true);
  });

  it('fails when anyone created a child in between, whatever the zxids', () => {
    assert.equal(provenSole(prev, { seq: 43, czxid: 1003n }), false);
    assert.equal(provenSole(prev, { seq: 41, czxid: 1002n }), false);
    assert.equal(provenSole(prev, { seq: 40, czxid: 1002n }), false);
  });

  it('fails once enough transactions ran between the creates to reap, re-create and refill the parent up to our sequence', () => {
    // A new parent reaching seq 42 needs its 42 creates, its deletion, its re-creation and our
    // node's deletion in between: czxid + 46 at the earliest.
    assert.equal(provenSole(prev, { seq: 42, czxid: 1045n }), true);
    assert.equal(provenSole(prev, { seq: 42, czxid: 1046n }), false);
    // A new leader's epoch moves the zxid by 2^32: never proven across it.
    assert.equal(provenSole(prev, { seq: 42, czxid: 1002n + (1n << 32n) }), false);
  });

  it('follows the sequence across the 2^31 wrap', () => {
    assert.equal(provenSole({ seq: 2147483647, czxid: 5n }, { seq: -2147483648, czxid: 7n }), true);
    assert.equal(provenSole({ seq: -1, czxid: 5n }, { seq: 0, czxid: 7n }), true);
    // Four zxids leave room for our node's deletion, a reap and a re-creation of the parent.
    assert.equal(provenSole({ seq: -1, czxid: 5n }, { seq: 0, czxid: 9n }), false);
    assert.equal(provenSole({ seq: 2147483647, czxid: 5n }, { seq: 2147483647, czxid: 7n }), false);
  });
});
