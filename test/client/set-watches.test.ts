import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { WatchEvent } from '../../src/index.js';
import { ROUND_TRIPS_MS, sessionBound } from '../support/bounds.js';
import { deferred, eventually, nextEvent } from '../support/wait.js';
import { RecipeFixture, within } from '../recipes/fixtures.js';

/** The opcodes of the watch re-registration frames (xid -8) in `chunks`, as sent upstream. */
function setWatchesOps(chunks: readonly Buffer[]): number[] {
  const bytes = Buffer.concat(chunks);
  const ops: number[] = [];
  for (let i = bytes.indexOf(Buffer.from([0xff, 0xff, 0xff, 0xf8])); i >= 0; i = bytes.indexOf(Buffer.from([0xff, 0xff, 0xff, 0xf8]), i + 1)) {
    if (i + 8 <= bytes.length) ops.push(bytes.readInt32BE(i + 4));
  }
  return ops;
}

/**
 * ZooKeeper 3.5 does not know SetWatches2 (105): it answers UNIMPLEMENTED and closes the
 * connection, so a client that always sent it could never reconnect there with a watch set.
 * Without persistent watches the client sends SetWatches (101), as the Java client does.
 */
describe('watch re-registration after a reconnect', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  it('sends SetWatches (101) with one-shot watches only, SetWatches2 (105) once a persistent watch exists, and the watches fire', async () => {
    const { client, proxy } = await zk.viaProxy({ sessionTimeout: 6000 });
    await zk.admin.create('/set-watches', 'v1');
    const upstream: Buffer[] = [];
    proxy.onChunk((event) => {
      if (event.direction === 'upstream') upstream.push(Buffer.from(event.chunk));
    });
    const reconnect = async (): Promise<void> => {
      const reconnected = nextEvent(client, 'reconnected', sessionBound(client.sessionTimeout));
      proxy.resetAll();
      await reconnected;
    };

    const changed = deferred<WatchEvent>();
    await client.getData('/set-watches', { watch: changed.resolve });
    upstream.length = 0;
    await reconnect();
    await eventually(() => setWatchesOps(upstream).length > 0, ROUND_TRIPS_MS, 'watches re-registered');
    assert.deepEqual(setWatchesOps(upstream), [101]);
    await zk.admin.setData('/set-watches', 'v2');
    assert.deepEqual(await within(changed.promise, ROUND_TRIPS_MS, 'the one-shot watch fires'), { type: 'dataChanged', path: '/set-watches' });

    const persistent = await client.addWatch('/set-watches');
    const events: WatchEvent[] = [];
    persistent.on((event) => events.push(event));
    upstream.length = 0;
    await reconnect();
    await eventually(() => setWatchesOps(upstream).length > 0, ROUND_TRIPS_MS, 'watches re-registered');
    assert.deepEqual(setWatchesOps(upstream), [105]);
    await zk.admin.setData('/set-watches', 'v3');
    await eventually(() => events.length > 0, ROUND_TRIPS_MS, 'the persistent watch fires');
    await persistent.remove();
  });
});
