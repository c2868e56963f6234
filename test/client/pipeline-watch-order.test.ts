import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sessionBound } from '../support/bounds.js';
import { RecipeFixture, within } from '../recipes/fixtures.js';

describe('watch events against replies in a deep (batched) pipeline', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  for (const via of ['direct', 'proxy'] as const) {
    it(`${via}: a reply that saw version v' settles only after every watcher set by a read of an older version has fired`, async () => {
      const reader = via === 'proxy' ? (await zk.viaProxy({ sessionTimeout: 20_000 })).client : await zk.client({ sessionTimeout: 20_000 });
      const writer = await zk.client();
      const path = `/pwo-${via}`;
      await writer.create(path, '0');
      let stop = false;
      const writes = (async () => {
        for (let i = 1; !stop; i++) await Promise.all(Array.from({ length: 4 }, () => writer.setData(path, String(i))));
      })();
      const registered: { version: number; fired: boolean }[] = [];
      const problems: string[] = [];
      let maxVersionSeen = -1;
      const depth = 64;
      await within(
        Promise.all(
          Array.from({ length: depth }, async () => {
            for (let n = 0; n < 20; n++) {
              const entry = { version: -1, fired: false };
              const { stat } = await reader.getData(path, {
                watch: () => {
                  entry.fired = true;
                },
              });
              const v = stat.version;
              // Every watcher registered by a read of an older version was fired by the change that made v.
              for (const other of registered) if (other.version < v && !other.fired) problems.push(`reply v${v} settled before the watcher set at v${other.version} fired`);
              if (v < maxVersionSeen) problems.push(`reply v${v} after a reply v${maxVersionSeen}`);
              maxVersionSeen = Math.max(maxVersionSeen, v);
              entry.version = v;
              registered.push(entry);
              if (registered.length > 2000) registered.splice(0, 1000);
            }
          }),
        ),
        sessionBound(20_000) * 2,
        'the reads',
      );
      stop = true;
      await writes;
      assert.deepEqual(problems.slice(0, 5), []);
    });
  }
});
