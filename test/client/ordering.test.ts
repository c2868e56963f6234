import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ZooKeeperClient } from '../../src/index.js';
import { ROUND_TRIPS_MS } from '../support/bounds.js';
import { deferred } from '../support/wait.js';
import { RecipeFixture, within } from '../recipes/fixtures.js';

/** Rounds of each race: the defect showed in about a quarter of them. */
const ROUNDS = 250;

/**
 * The server sends a session's replies and watch events in one order; the client must deliver
 * them in that order. Watchers were called while the frames were decoded, replies settled through
 * promises: a watch event overtook the `await` continuation of the reply sent before it.
 */
describe('replies and watch events reach the caller in the order the server sent them', () => {
  let zk: RecipeFixture;
  let client: ZooKeeperClient;
  before(async () => {
    zk = await RecipeFixture.start();
    client = await zk.client();
  });
  after(async () => {
    await zk?.close();
  });

  it('await getData(p, { watch }) resumes before the watch fired by a setData pipelined behind it', async () => {
    await client.create('/order', '0');
    const wrong: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const log: string[] = [];
      const fired = deferred<void>();
      let dirty = false;
      const reader = (async () => {
        await client.getData('/order', {
          watch: () => {
            dirty = true;
            log.push('watch');
            fired.resolve();
          },
        });
        // The reply is consumed: only a change after it may make the node dirty again.
        dirty = false;
        log.push('getData');
      })();
      const writer = (async () => {
        await client.setData('/order', String(round));
        log.push('setData');
      })();
      await within(Promise.all([reader, writer, fired.promise]), ROUND_TRIPS_MS, `round ${round}`);
      assert.equal(dirty, true, `round ${round}: the change made after the read was lost (${log.join(' → ')})`);
      if (log.join() !== 'getData,watch,setData') wrong.push(`round ${round}: ${log.join(' → ')}`);
    }
    assert.deepEqual(wrong, [], 'the server sent: getData reply, watch event, setData reply');
  });

  it('a watch event waits for the reply before it, and the replies after it (a read that sees the change) wait for the event', async () => {
    await client.create('/order-later', '0');
    const wrong: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const log: string[] = [];
      const fired = deferred<void>();
      // Pipelined: getData's reply, setData's event, setData's reply, then the read that sees the new data.
      const watched = client.getData('/order-later', { watch: () => (log.push('watch'), fired.resolve()) }).then(() => log.push('getData'));
      const write = client.setData('/order-later', String(round)).then(() => log.push('setData'));
      const read = client.getData('/order-later').then(({ data }) => log.push(`read ${data.toString()}`));
      await within(Promise.all([watched, write, read, fired.promise]), ROUND_TRIPS_MS, `round ${round}`);
      // The two replies after the event may reach their callers in either order: see the README (Ordering).
      const at = (entry: string): number => log.indexOf(entry);
      if (!(at('getData') < at('watch') && at('watch') < at('setData') && at('watch') < at(`read ${round}`))) wrong.push(`round ${round}: ${log.join(' → ')}`);
    }
    assert.deepEqual(wrong, []);
  });
});
