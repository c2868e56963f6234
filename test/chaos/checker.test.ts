import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { check } from '../../chaos/checker.js';
import type { FaultRecord, OperationRecord } from '../../chaos/history.js';
import { LOCKS } from '../../chaos/history.js';

const LOCK = LOCKS.mutexes[0];
const T = 3000;

/** An accepted exclusive operation on LOCK, acquired at `at` and running until `end`. */
function op(id: string, session: string, at: number, end: number, extra: Partial<OperationRecord> = {}): OperationRecord {
  return {
    id,
    worker: id,
    process: id,
    kind: 'mutex',
    locks: [{ lock: LOCK, token: String(at), fenced: true }],
    language: 'zklock',
    session,
    acquiredAt: at,
    start: at + 1,
    end,
    accepted: true,
    ...extra,
  };
}

function run(operations: OperationRecord[], faults: FaultRecord[] = []): ReturnType<typeof check> {
  return check({ operations, faults, leakedNodes: [], sessionTimeoutMs: T, runStart: 0, runEnd: 100_000 });
}

describe('chaos checker', () => {
  it('a lost lease whose signal came before the next acquisition keeps its promise, with the margin measured', () => {
    const result = run([op('a', 's1', 1000, 3000, { lost: 'SESSION_MAY_HAVE_EXPIRED', lostAt: 2000 }), op('b', 's2', 4500, 5000)]);
    assert.equal(result.lostLeaseViolations, 0);
    assert.equal(result.lostLeases[0]?.marginMs, 2500);
    assert.equal(result.lostLeases[0]?.next?.op, 'b');
    assert.ok(result.ok);
    const lived = run([op('a', 's1', 1000, 3000, { lost: 'SESSION_MAY_HAVE_EXPIRED', lostAt: 2000 }), op('b', 's2', 4500, 5000), op('a2', 's1', 6000, 6100, { process: 'a', worker: 'a' })]);
    assert.equal(lived.lostLeases[0]?.sessionEnded, false, 'its process went on with the same session');
    assert.equal(lived.byKind.find((k) => k.kind === 'none')?.endedMarginMs, null);
    const ended = run([op('a', 's1', 1000, 3000, { lost: 'SESSION_EXPIRED', lostAt: 2000 }), op('b', 's2', 4500, 5000), op('a2', 's3', 6000, 6100, { process: 'a', worker: 'a' })]);
    assert.equal(ended.byKind.find((k) => k.kind === 'none')?.endedMarginMs?.min, 2500);
    // A sibling logical worker on the same client acquired during the hold, on the session still alive: it says nothing.
    const sibling = op('a-sibling', 's1', 2500, 2600, { process: 'a', kind: 'read', locks: [{ lock: LOCKS.readWrite, token: '0', fenced: false }] });
    const ended2 = run([op('a', 's1', 1000, 3000, { lost: 'SESSION_EXPIRED', lostAt: 2000 }), sibling, op('b', 's2', 4500, 5000), op('a2', 's3', 6000, 6100, { process: 'a', worker: 'a' })]);
    assert.equal(ended2.lostLeases[0]?.sessionEnded, true);
  });

  it('a signal after another session acquired is a violation, reported with its timeline and fault', () => {
    const fault: FaultRecord = { kind: 'isolate-follower-from-leader', target: 'member 2', start: 1500, end: 6000 };
    const result = run([op('a', 's1', 1000, 5000, { lost: 'SESSION_EXPIRED', lostAt: 4800 }), op('b', 's2', 4000, 6000)], [fault]);
    assert.equal(result.lostLeaseViolations, 1);
    const [lease] = result.lostLeases;
    assert.equal(lease?.marginMs, -800);
    assert.equal(lease?.fault, 'isolate-follower-from-leader');
    assert.ok(lease?.timeline?.some((line) => line.includes('b (zklock, s2) acquired')));
    assert.equal(result.byKind.find((k) => k.kind === 'isolate-follower-from-leader')?.violations, 2, 'the late signal and the overlap it allowed');
    assert.equal(result.ok, false);
  });

  it('another logical worker on the same session is another holder; the same worker acquiring again is not', () => {
    const lost = { lost: 'SESSION_MAY_HAVE_EXPIRED', lostAt: 2500 };
    const sameWorker = run([op('a', 's1', 1000, 3000, lost), op('a2', 's1', 3200, 3300, { worker: 'a' })]);
    assert.equal(sameWorker.lostLeases[0]?.marginMs, null);
    const sibling = run([op('a', 's1', 1000, 3000, lost), op('b', 's1', 2000, 2100)]);
    assert.equal(sibling.lostLeases[0]?.marginMs, -500);
    assert.equal(sibling.lostLeaseViolations, 1);
  });

  it('holds are compared from their acquire: a holder that ended before the other reached the resource still overlapped it', () => {
    const result = run([op('a', 's1', 1000, 4000), op('b', 's2', 3500, 4500, { start: 4100 })]);
    assert.equal(result.unexcusedOverlaps, 1);
  });

  it('a lost semaphore lease counts until its signal', () => {
    const sem = (id: string, session: string, at: number, end: number, extra: Partial<OperationRecord> = {}): OperationRecord =>
      op(id, session, at, end, { kind: 'semaphore', locks: [{ lock: LOCKS.semaphore, token: '0', fenced: false }], ...extra });
    const early = run([sem('a', 's1', 1000, 5000, { lost: 'SESSION_EXPIRED', lostAt: 1500 }), sem('b', 's2', 2000, 3000), sem('c', 's3', 2000, 3000)]);
    assert.equal(early.semaphoreMax.unexcused, 2);
    const late = run([sem('a', 's1', 1000, 5000, { lost: 'SESSION_EXPIRED', lostAt: 2500 }), sem('b', 's2', 2000, 3000), sem('c', 's3', 2000, 3000)]);
    assert.equal(late.semaphoreMax.unexcused, 3);
    assert.equal(late.ok, false);
  });

  it('a peer that held on past its session is excused only when its session ended during a fault that could end it', () => {
    const peer = op('curator', 's1', 1000, 5000, { language: 'curator', process: 'curator1' });
    const next = op('b', 's2', 4000, 4500);
    const peerLater = (session: string): OperationRecord => op('curator-next', session, 6000, 6100, { language: 'curator', process: 'curator1', worker: 'curator' });
    assert.equal(run([peer, next, peerLater('s9')]).unexcusedOverlaps, 1, 'no fault: a finding');
    const own: FaultRecord = { kind: 'expire-session', target: 'curator1', start: 1500, end: 3500 };
    const excused = run([peer, next, peerLater('s9')], [own]);
    assert.equal(excused.unexcusedOverlaps, 0);
    assert.equal(excused.overlaps[0]?.excuse, 'peer');
    assert.equal(run([peer, next, peerLater('s1')], [own]).unexcusedOverlaps, 1, 'its session lived on: the newcomer got in wrongly');
    const elsewhere: FaultRecord = { kind: 'pause-worker', target: 'w3', start: 1500, end: 3500 };
    assert.equal(run([peer, next, peerLater('s9')], [elsewhere]).unexcusedOverlaps, 1, 'a fault on another worker cannot end its session');
  });

  it('a pause that began after the overlap did not excuse it', () => {
    const late: FaultRecord = { kind: 'pause-worker', target: 'a', start: 4200, end: 4800 };
    assert.equal(run([op('a', 's1', 1000, 5000), op('b', 's2', 4000, 4500)], [late]).unexcusedOverlaps, 1);
    const early: FaultRecord = { kind: 'pause-worker', target: 'a', start: 3000, end: 4800 };
    assert.equal(run([op('a', 's1', 1000, 5000), op('b', 's2', 4000, 4500)], [early]).unexcusedOverlaps, 0);
  });

  it('a zklock holder that held first and was never signalled is not excused by the peer that came next', () => {
    const fault: FaultRecord = { kind: 'freeze-member', target: 'member 1', start: 500, end: 3500 };
    const result = run([op('a', 's1', 1000, 5000), op('curator', 's2', 4000, 4500, { language: 'curator' })], [fault]);
    assert.equal(result.unexcusedOverlaps, 1);
  });
});
