import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { blockers, compareSeq, parseContender, sortContenders } from '../../src/recipes/index.js';

/** The server's %010d: ten digits, or a minus sign and the digits past the wrap. */
function seqSuffix(n: number): string {
  return n < 0 ? `-${String(-n).padStart(9, '0')}` : String(n).padStart(10, '0');
}

const UUID = '0b8f9c52-6a53-4c39-9c56-5f4d2b1e9a10';
const HEX = '0b8f9c526a534c399c565f4d2b1e9a10';

describe('contender names', () => {
  it('recognises Curator and kazoo names, and nothing else', () => {
    assert.deepEqual(parseContender(`_c_${UUID}-lock-0000000007`), { name: `_c_${UUID}-lock-0000000007`, seq: 7, kind: 'exclusive' });
    assert.equal(parseContender('lock-0000000001')?.kind, 'exclusive');
    assert.equal(parseContender(`_c_${UUID}-__READ__0000000002`)?.kind, 'shared');
    assert.equal(parseContender(`_c_${UUID}-__WRIT__0000000003`)?.kind, 'exclusive');
    assert.deepEqual(parseContender(`${HEX}__lock__0000000004`), { name: `${HEX}__lock__0000000004`, seq: 4, kind: 'exclusive' });
    assert.equal(parseContender(`${HEX}__rlock__0000000005`)?.kind, 'shared');
    for (const stray of ['leases', 'lock-1', 'lock-00000000001', `_c_${UUID}-lock-`, 'x__lock__0000000001', `${HEX}__lock__000000000a`, 'readme']) {
      assert.equal(parseContender(stray), undefined, stray);
    }
  });

  it('parses the sequence past the 2^31 wrap as a negative int32', () => {
    assert.equal(parseContender(`lock-${seqSuffix(-2147483648)}`)?.seq, -2147483648);
    assert.equal(parseContender(`lock-${seqSuffix(-5)}`)?.seq, -5);
    assert.equal(seqSuffix(-5), '-000000005');
  });
});

describe('queue order across the sequence wrap', () => {
  it('orders by serial-number arithmetic, not by string or by value', () => {
    assert.ok(compareSeq(2147483646, 2147483647) < 0);
    assert.ok(compareSeq(2147483647, -2147483648) < 0, 'MAX_INT precedes MIN_INT after the wrap');
    assert.ok(compareSeq(-2147483648, -2147483647) < 0);
    assert.ok(compareSeq(5, 5) === 0);
  });

  it('sorts a queue that straddles the wrap, ignoring unknown children', () => {
    const seqs = [-2147483647, 2147483646, -2147483648, 2147483647];
    const names = [...seqs.map((s) => `_c_${UUID}-lock-${seqSuffix(s)}`), 'leases', 'junk'];
    assert.deepEqual(
      sortContenders(names).map((c) => c.seq),
      [2147483646, 2147483647, -2147483648, -2147483647],
    );
  });

  it('decides holders and nearest blockers across the wrap', () => {
    const w = (s: number): string => `_c_${UUID}-__WRIT__${seqSuffix(s)}`;
    const r = (s: number): string => `_c_${UUID}-__READ__${seqSuffix(s)}`;
    const queue = sortContenders([r(2147483646), w(2147483647), r(-2147483648), w(-2147483647), r(-2147483646)]);
    const byName = (name: string) => queue.find((c) => c.name === name)!;
    assert.deepEqual(blockers(queue, byName(r(2147483646))), [], 'the first reader holds');
    assert.deepEqual(
      blockers(queue, byName(w(2147483647))).map((c) => c.seq),
      [2147483646],
      'a writer waits for its immediate predecessor',
    );
    assert.deepEqual(
      blockers(queue, byName(r(-2147483648))).map((c) => c.seq),
      [2147483647],
      'a reader waits only for the nearest writer ahead, across the wrap',
    );
    assert.deepEqual(
      blockers(queue, byName(r(-2147483646))).map((c) => c.seq),
      [-2147483647, 2147483647],
      'nearest writer first, then the next one down the listing',
    );
    assert.deepEqual(
      blockers(queue, byName(w(-2147483647))).map((c) => c.seq),
      [-2147483648, 2147483647, 2147483646],
      'an exclusive contender waits for everyone ahead, nearest first',
    );
  });

  it('ignores our own writer when a holder takes the read lock (downgrade)', () => {
    const queue = sortContenders([`_c_${UUID}-__WRIT__0000000001`, `_c_${UUID}-__READ__0000000002`]);
    assert.deepEqual(blockers(queue, queue[1]!, new Set([queue[0]!.name])), []);
  });
});
