import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Fifo } from '../../src/connection/fifo.js';

describe('Fifo', () => {
  it('keeps order across wrap-arounds, growth and shrinking', () => {
    const fifo = new Fifo<number>();
    const model: number[] = [];
    let next = 0;
    // Grow to thousands, drain to a few, grow again: the ring wraps, doubles and halves.
    for (const [pushes, shifts] of [[10, 5], [5000, 100], [3, 4900], [20_000, 19_990], [7, 0]] as const) {
      for (let i = 0; i < pushes; i++) {
        fifo.push(next);
        model.push(next++);
      }
      for (let i = 0; i < shifts; i++) assert.equal(fifo.shift(), model.shift());
      assert.equal(fifo.length, model.length);
      assert.equal(fifo.peek(), model[0]);
      assert.equal(fifo.last(), model.at(-1));
      assert.equal(fifo.at(model.length - 1), model.at(-1));
      assert.equal(fifo.at(model.length), undefined);
    }
    const rest: number[] = [];
    for (let item = fifo.shift(); item !== undefined; item = fifo.shift()) rest.push(item);
    assert.deepEqual(rest, model);
    assert.equal(fifo.length, 0);
    assert.equal(fifo.shift(), undefined);
    assert.equal(fifo.peek(), undefined);
    assert.equal(fifo.last(), undefined);
  });
});
