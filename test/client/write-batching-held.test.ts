import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ZooKeeperError } from '../../src/index.js';
import { ROUND_TRIPS_MS, sessionBound } from '../support/bounds.js';
import { RecipeFixture, within } from '../recipes/fixtures.js';

function load(client: unknown): { inFlight: number; waiting: number } {
  const session = (client as { session: { outstanding: { length: number }; pending: { waiting: number } } }).session;
  return { inFlight: session.outstanding.length, waiting: session.pending.waiting };
}

async function until(cond: () => boolean, ms: number, what: string): Promise<void> {
  await within(
    (async () => {
      while (!cond()) await new Promise((resolve) => setImmediate(resolve));
    })(),
    ms,
    what,
  );
}

describe('requests held for a larger write when the connection drops, the session expires or the client closes', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  for (const ending of ['reset', 'close', 'expire'] as const) {
    it(`${ending}: every request settles, in call order, and what ran on the server is a prefix of what was asked`, async () => {
      const { client, proxy } = await zk.viaProxy({ sessionTimeout: 4000 });
      const parent = `/held-${ending}`;
      await client.create(parent);
      proxy.latency('downstream', 300);
      const outcomes: { i: number; ok: boolean; code?: string }[] = [];
      const asked = Array.from({ length: 40 }, (_, i) =>
        client.create(`${parent}/a-`, String(i), { mode: 'PERSISTENT_SEQUENTIAL' }).then(
          () => void outcomes.push({ i, ok: true }),
          (error: unknown) => void outcomes.push({ i, ok: false, code: (error as ZooKeeperError).code }),
        ),
      );
      await until(() => load(client).inFlight === 40, ROUND_TRIPS_MS, 'the 40 written');
      // Made in a timer-like turn: held behind the 40.
      const held = Array.from({ length: 5 }, (_, j) =>
        client.create(`${parent}/a-`, String(40 + j), { mode: 'PERSISTENT_SEQUENTIAL' }).then(
          () => void outcomes.push({ i: 40 + j, ok: true }),
          (error: unknown) => void outcomes.push({ i: 40 + j, ok: false, code: (error as ZooKeeperError).code }),
        ),
      );
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(load(client), { inFlight: 40, waiting: 5 }, 'held');
      if (ending === 'reset') proxy.resetAll();
      else if (ending === 'close') void client.close();
      // Silent until the client gives the session up (no server reachable for its timeout).
      else proxy.blackhole();
      await within(Promise.all([...asked, ...held]), sessionBound(4000) + ROUND_TRIPS_MS, 'every request settled');
      assert.deepEqual(
        outcomes.map((o) => o.i),
        Array.from({ length: 45 }, (_, i) => i),
        'settled in call order',
      );
      proxy.passThrough();
      const observer = await zk.client();
      const ran = (await observer.getChildren(parent)).children.length;
      const datas = await Promise.all((await observer.getChildren(parent)).children.map(async (c) => Number((await observer.getData(`${parent}/${c}`)).data.toString())));
      datas.sort((a, b) => a - b);
      assert.deepEqual(datas, Array.from({ length: ran }, (_, i) => i), 'a prefix ran');
      const okCount = outcomes.filter((o) => o.ok).length;
      assert.ok(okCount <= ran, `${okCount} reported ok, ${ran} ran`);
      // close() writes what was asked before it (README: held ones too); a loss fails them unsent.
      if (ending === 'close') assert.equal(okCount, 45, 'everything asked before close() ran and was answered');
      else for (const o of outcomes.filter((x) => x.i >= 40)) assert.notEqual(o.ok, true, 'a held request did not run after the end');
      await observer.close();
    });
  }
});
