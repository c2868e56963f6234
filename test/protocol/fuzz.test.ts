import assert from 'node:assert/strict';
import { it } from 'node:test';
import { fuzz } from './fuzz.js';

it('decoders fail only with PROTOCOL_ERROR on random and mutated frames (short run; npm run fuzz for a long one)', () => {
  assert.equal(fuzz(20_000, 20261122), 20_000);
});
