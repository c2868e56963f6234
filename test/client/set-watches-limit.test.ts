import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ROUND_TRIPS_MS, sessionBound } from '../support/bounds.js';
import { eventually, nextEvent } from '../support/wait.js';
import { RecipeFixture } from '../recipes/fixtures.js';

/** A server that reads no request longer than this drops the connection of one that is. */
const JUTE_MAX_BUFFER = 16 * 1024;

describe('watch re-registration within a small jute.maxbuffer', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start({ jvmArgs: [`-Djute.maxbuffer=${JUTE_MAX_BUFFER}`] });
  });
  after(async () => {
    await zk?.close();
  });

  it('splits the setWatches record at maxRequestBytes, so 40 KB of watched paths come back and fire', async () => {
    const { client, proxy } = await zk.viaProxy({ sessionTimeout: 6000, maxRequestBytes: JUTE_MAX_BUFFER });
    await zk.admin.create('/limit');
    // 200 paths of about 200 bytes: far more than one 16 KiB record holds, far less than 128 KiB.
    const paths = Array.from({ length: 200 }, (_, i) => `/limit/${String(i).padStart(3, '0')}-${'w'.repeat(190)}`);
    const fired = new Set<string>();
    for (const path of paths) await client.exists(path, { watch: (event) => fired.add(event.path) });

    const reconnected = nextEvent(client, 'reconnected', sessionBound(client.sessionTimeout));
    proxy.resetAll();
    await reconnected;
    let drops = 0;
    client.on('suspended', () => drops++);
    for (const path of paths) await zk.admin.create(path);
    await eventually(() => fired.size === paths.length, ROUND_TRIPS_MS, 'every re-registered watch fires');
    assert.equal(drops, 0, 'the server kept the connection');
  });
});
