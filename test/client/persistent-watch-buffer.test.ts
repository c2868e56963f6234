import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { WatchEvent, ZooKeeperClient } from '../../src/index.js';
import { RecipeFixture } from '../recipes/fixtures.js';
import { ROUND_TRIPS_MS } from '../support/bounds.js';
import { serverWatches } from '../support/server-watches.js';
import { eventually } from '../support/wait.js';

/**
 * A persistent watch's async iterator holds the events its consumer has not asked for yet.
 * Before: without bound, so a consumer slower than the writes grew the client's memory for as
 * long as the watch lived.
 */
describe('the buffer of a persistent watch iterated by a slow consumer', () => {
  let zk: RecipeFixture;
  let client: ZooKeeperClient;

  before(async () => {
    zk = await RecipeFixture.start();
    client = await zk.client();
  });
  after(async () => {
    await zk?.close();
  });

  it('holds maxBuffered events, then ends the iteration with WATCH_OVERFLOW after them and removes the watch', async () => {
    await zk.admin.create('/buffer', 'v0');
    const watch = await client.addWatch('/buffer', { maxBuffered: 3 });
    const events = watch[Symbol.asyncIterator]();
    for (let i = 1; i <= 5; i++) await zk.admin.setData('/buffer', `v${i}`);
    // On one server, this sync is answered after the notifications of the writes before it.
    await client.sync('/');

    const taken: WatchEvent[] = [];
    for (let i = 0; i < 3; i++) {
      const next = await events.next();
      assert.equal(next.done, false, 'a buffered event');
      taken.push(next.value);
    }
    assert.deepEqual(taken, Array(3).fill({ type: 'dataChanged', path: '/buffer' }));
    await assert.rejects(events.next(), { name: 'ZooKeeperError', code: 'WATCH_OVERFLOW', op: 'addWatch', path: '/buffer' });
    assert.deepEqual(await events.next(), { value: undefined, done: true });
    assert.equal(watch.active, false, 'the watch was removed');
    await eventually(async () => !(await serverWatches(zk.server, client.sessionId)).includes('/buffer'), ROUND_TRIPS_MS, 'no server watch left');
  });

  it('refuses a maxBuffered that is not a positive integer before sending anything', async () => {
    for (const maxBuffered of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      await assert.rejects(client.addWatch('/buffer-refused', { maxBuffered }), { code: 'INVALID_ARGUMENT', op: 'addWatch', path: '/buffer-refused' }, String(maxBuffered));
    }
    assert.ok(!(await serverWatches(zk.server, client.sessionId)).includes('/buffer-refused'));
  });
});
