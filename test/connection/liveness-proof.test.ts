import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LivenessProof } from '../../src/connection/session/liveness-proof.js';

/** G, the longest the leader may go between two pings to a follower, in these cases. */
const G = 1000;
/** The session timeout: long enough that the proofs below still stand when their chains complete, unless a case says otherwise. */
const T = 1_000_000_000;

describe('proof that the leader has heard of our session', () => {
  it('a handshake proves its own send time', () => {
    const proof = new LivenessProof(() => G, () => T);
    proof.onHandshake(100, 110, false);
    assert.equal(proof.sentAt, 100);
  });

  it('replies from a follower prove nothing on their own: pings and reads are answered without the leader', () => {
    const proof = new LivenessProof(() => G, () => T);
    proof.onHandshake(0, 10, false);
    for (let t = 500; t < 10_000; t += 500) proof.onAnswer(t, t + 5, 'plain');
    assert.equal(proof.sentAt, 0);
  });

  it('one sync is not enough: the follower may have answered it before relaying anything', () => {
    const proof = new LivenessProof(() => G, () => T);
    proof.onHandshake(0, 10, false);
    proof.onAnswer(2000, 2005, 'plain'); // a ping
    proof.onSyncSent(3100); // sent more than G after the ping's answer
    proof.onAnswer(3100, 3110, 'sync');
    assert.equal(proof.sentAt, 0);
  });

  it('a sync sent G after an answer, chained by a later sync sent after its own answer, proves that answer', () => {
    const proof = new LivenessProof(() => G, () => T);
    proof.onHandshake(0, 10, false);
    proof.onAnswer(2000, 2005, 'plain'); // packet j
    proof.onSyncSent(3005); // k: sent G after j's answer
    proof.onAnswer(3005, 3015, 'sync');
    proof.onSyncSent(3020); // m: sent after k's answer
    proof.onAnswer(3020, 3030, 'sync');
    assert.equal(proof.sentAt, 2000);
  });

  it('needs the whole G between the answer and the next sync: a sync sent sooner covers only older answers', () => {
    const proof = new LivenessProof(() => G, () => T);
    proof.onHandshake(0, 10, false);
    proof.onAnswer(2000, 2005, 'plain');
    proof.onSyncSent(2900); // less than G after j's answer: covers the handshake only
    proof.onAnswer(2900, 2910, 'sync');
    proof.onSyncSent(2920);
    proof.onAnswer(2920, 2930, 'sync');
    assert.equal(proof.sentAt, 0);
  });

  it('a later sync chains an earlier one only if it was sent after that one was answered', () => {
    const proof = new LivenessProof(() => G, () => T);
    proof.onHandshake(0, 10, false);
    proof.onAnswer(2000, 2005, 'plain');
    proof.onSyncSent(3005); // k
    proof.onSyncSent(3006); // m: sent before k was answered
    proof.onAnswer(3005, 3015, 'sync');
    proof.onAnswer(3006, 3016, 'sync');
    assert.equal(proof.sentAt, 0);
    proof.onSyncSent(3020); // sent after both answers: chains both
    proof.onAnswer(3020, 3030, 'sync');
    assert.equal(proof.sentAt, 2000);
  });

  it('a chain holds through one server only: a lost connection drops the links made on it', () => {
    const proof = new LivenessProof(() => G, () => T);
    proof.onHandshake(0, 10, false);
    proof.onAnswer(2000, 2005, 'plain');
    proof.onSyncSent(3005);
    proof.onAnswer(3005, 3015, 'sync');
    proof.onConnectionLost();
    proof.onSyncSent(3020); // on another connection, before any handshake: must not chain
    proof.onAnswer(3020, 3030, 'sync');
    assert.equal(proof.sentAt, 0);
    proof.onHandshake(4000, 4010, false);
    assert.equal(proof.sentAt, 4000);
  });

  it('keeps a bounded record however many replies arrive, and still proves the newest answer that qualifies', () => {
    const proof = new LivenessProof(() => G, () => T);
    proof.onHandshake(0, 1, false);
    let t = 1;
    for (; t < 100_000; t += 1) proof.onAnswer(t, t + 1, 'plain');
    const internals = proof as unknown as { answered: { length: number } };
    assert.ok(internals.answered.length <= 40, `${internals.answered.length} answers kept`);
    proof.onSyncSent(t);
    proof.onAnswer(t, t + 1, 'sync');
    proof.onSyncSent(t + 2);
    proof.onAnswer(t + 2, t + 3, 'sync');
    // The newest answer at least G before the first sync's send time, give or take the G/32 thinning.
    assert.ok(proof.sentAt <= t - G && proof.sentAt >= t - G - G / 32 - 2, String(proof.sentAt));
  });

  it('a lapsed proof is not built again by syncs (the leader answers them even for a dead session), but by a write', () => {
    const proof = new LivenessProof(() => G, () => 5000);
    proof.onHandshake(0, 10, false);
    proof.onAnswer(8000, 8005, 'plain');
    proof.onSyncSent(9005); // k, covering the answer at 8005
    proof.onAnswer(9005, 9015, 'sync');
    proof.onSyncSent(9020); // m: answered at 9030, long after the handshake's proof ran out at 5000
    proof.onAnswer(9020, 9030, 'sync');
    assert.equal(proof.sentAt, 0);
    proof.onAnswer(9040, 9050, 'write'); // a create sent after k's answer: the leader checked the session
    assert.equal(proof.sentAt, 8000);
  });

  it('a handshake with a read-only server proves nothing: it has no leader', () => {
    const proof = new LivenessProof(() => G, () => T);
    proof.onHandshake(100, 110, true);
    assert.equal(proof.sentAt, 0);
  });

  it('a failed sync leaves the queue of syncs in flight in step', () => {
    const proof = new LivenessProof(() => G, () => T);
    proof.onHandshake(0, 10, false);
    proof.onAnswer(2000, 2005, 'plain');
    proof.onSyncSent(2500); // fails: covers nothing then
    proof.onSyncSent(3005); // k: covers the answer at 2005
    proof.onAnswer(2500, 2510, 'failedSync');
    proof.onAnswer(3005, 3015, 'sync');
    proof.onSyncSent(3020);
    proof.onAnswer(3020, 3030, 'sync');
    assert.equal(proof.sentAt, 2000);
  });
});
