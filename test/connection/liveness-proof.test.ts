import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LivenessProof } from '../../src/connection/liveness-proof.js';

/** G, the longest the leader may go between two pings to a follower, in these cases. */
const G = 1000;

describe('proof that the leader has heard of our session', () => {
  it('a handshake proves its own send time', () => {
    const proof = new LivenessProof(() => G);
    proof.onHandshake(100, 110);
    assert.equal(proof.sentAt, 100);
  });

  it('replies from a follower prove nothing on their own: pings and reads are answered without the leader', () => {
    const proof = new LivenessProof(() => G);
    proof.onHandshake(0, 10);
    for (let t = 500; t < 10_000; t += 500) proof.onAnswer(t, t + 5, false);
    assert.equal(proof.sentAt, 0);
  });

  it('one sync is not enough: the follower may have answered it before relaying anything', () => {
    const proof = new LivenessProof(() => G);
    proof.onHandshake(0, 10);
    proof.onAnswer(2000, 2005, false); // a ping
    proof.onSyncSent(3100); // sent more than G after the ping's answer
    proof.onAnswer(3100, 3110, true);
    assert.equal(proof.sentAt, 0);
  });

  it('a sync sent G after an answer, chained by a later sync sent after its own answer, proves that answer', () => {
    const proof = new LivenessProof(() => G);
    proof.onHandshake(0, 10);
    proof.onAnswer(2000, 2005, false); // packet j
    proof.onSyncSent(3005); // k: sent G after j's answer
    proof.onAnswer(3005, 3015, true);
    proof.onSyncSent(3020); // m: sent after k's answer
    proof.onAnswer(3020, 3030, true);
    assert.equal(proof.sentAt, 2000);
  });

  it('needs the whole G between the answer and the next sync: a sync sent sooner covers only older answers', () => {
    const proof = new LivenessProof(() => G);
    proof.onHandshake(0, 10);
    proof.onAnswer(2000, 2005, false);
    proof.onSyncSent(2900); // less than G after j's answer: covers the handshake only
    proof.onAnswer(2900, 2910, true);
    proof.onSyncSent(2920);
    proof.onAnswer(2920, 2930, true);
    assert.equal(proof.sentAt, 0);
  });

  it('a later sync chains an earlier one only if it was sent after that one was answered', () => {
    const proof = new LivenessProof(() => G);
    proof.onHandshake(0, 10);
    proof.onAnswer(2000, 2005, false);
    proof.onSyncSent(3005); // k
    proof.onSyncSent(3006); // m: sent before k was answered
    proof.onAnswer(3005, 3015, true);
    proof.onAnswer(3006, 3016, true);
    assert.equal(proof.sentAt, 0);
    proof.onSyncSent(3020); // sent after both answers: chains both
    proof.onAnswer(3020, 3030, true);
    assert.equal(proof.sentAt, 2000);
  });

  it('a chain holds through one server only: a lost connection drops the links made on it', () => {
    const proof = new LivenessProof(() => G);
    proof.onHandshake(0, 10);
    proof.onAnswer(2000, 2005, false);
    proof.onSyncSent(3005);
    proof.onAnswer(3005, 3015, true);
    proof.onConnectionLost();
    proof.onSyncSent(3020); // on another connection, before any handshake: must not chain
    proof.onAnswer(3020, 3030, true);
    assert.equal(proof.sentAt, 0);
    proof.onHandshake(4000, 4010);
    assert.equal(proof.sentAt, 4000);
  });

  it('keeps a bounded record however many replies arrive, and still proves the newest answer that qualifies', () => {
    const proof = new LivenessProof(() => G);
    proof.onHandshake(0, 1);
    let t = 1;
    for (; t < 100_000; t += 1) proof.onAnswer(t, t + 1, false);
    const internals = proof as unknown as { answered: { length: number } };
    assert.ok(internals.answered.length <= 40, `${internals.answered.length} answers kept`);
    proof.onSyncSent(t);
    proof.onAnswer(t, t + 1, true);
    proof.onSyncSent(t + 2);
    proof.onAnswer(t + 2, t + 3, true);
    // The newest answer at least G before the first sync's send time, give or take the G/32 thinning.
    assert.ok(proof.sentAt <= t - G && proof.sentAt >= t - G - G / 32 - 2, String(proof.sentAt));
  });
});
