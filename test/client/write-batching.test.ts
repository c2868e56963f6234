import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CREATOR_ALL_ACL } from '../../src/index.js';
import { MIN_IN_FLIGHT_TO_BATCH, holdForBatch } from '../../src/connection/write-batching.js';
import { ROUND_TRIPS_MS, sessionBound } from '../support/bounds.js';
import { RecipeFixture, within } from '../recipes/fixtures.js';

/** The session's counts, as the backpressure tests read them. */
function load(client: unknown): { inFlight: number; waiting: number } {
  const session = (client as { session: { outstanding: { length: number }; pending: { waiting: number } } }).session;
  return { inFlight: session.outstanding.length, waiting: session.pending.waiting };
}

/** Runs `op` for i = 0..total-1 with `depth` calls in flight, each made again as its reply comes. */
async function slidingWindow(total: number, depth: number, op: (i: number) => Promise<unknown>): Promise<void> {
  await Promise.all(
    Array.from({ length: depth }, async (_, worker) => {
      for (let i = worker; i < total; i += depth) await op(i);
    }),
  );
}

describe('requests held for a larger write, deep in a pipeline', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  it('never below MIN_IN_FLIGHT_TO_BATCH in flight, and only until a quarter of the pipeline waits', () => {
    for (let inFlight = 0; inFlight < MIN_IN_FLIGHT_TO_BATCH; inFlight++) assert.equal(holdForBatch(inFlight, 1), false, `${inFlight} in flight`);
    assert.equal(holdForBatch(48, 15), true);
    assert.equal(holdForBatch(48, 16), false, 'a quarter of 64 waits: it goes');
  });

  it('a sliding window of 64 creates: every one runs, in call order, and none is left waiting', async () => {
    const { client } = await zk.viaProxy({ sessionTimeout: 20_000 });
    await client.create('/batched');
    const paths: string[] = [];
    const total = 2_000;
    await within(
      slidingWindow(total, 64, async (i) => {
        paths[i] = (await client.create('/batched/n-', String(i), { mode: 'PERSISTENT_SEQUENTIAL' })).path;
      }),
      sessionBound(client.sessionTimeout),
      'every create answered',
    );
    // The server numbers sequential nodes in the order it runs the creates.
    const numbers = paths.map((p) => Number(p.slice(-10)));
    assert.ok(
      numbers.every((n, i) => i === 0 || n > numbers[i - 1]!),
      'sequence numbers grow in call order',
    );
    assert.equal((await zk.children('/batched')).length, total);
    assert.deepEqual(load(client), { inFlight: 0, waiting: 0 });
  });

  it('addAuth while requests wait behind a deep pipeline: they go out first, and run without the identity', async () => {
    const { client, proxy } = await zk.viaProxy({ sessionTimeout: 20_000 });
    // The replies take a while: what is written stays in flight, and what comes next waits for a larger write.
    proxy.latency('downstream', 200);
    const ahead = Array.from({ length: 40 }, () => client.exists('/'));
    await within(
      (async () => {
        while (load(client).inFlight < 40) await new Promise((resolve) => setImmediate(resolve));
      })(),
      ROUND_TRIPS_MS,
      'the 40 written',
    );
    // With no identity yet, the server refuses a creator-only ACL.
    const before = client.create('/batched-before-auth', 'x', { acl: CREATOR_ALL_ACL });
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(load(client), { inFlight: 40, waiting: 1 }, 'held for a larger write');
    const auth = client.addAuth('digest', 'erin:pw');
    await assert.rejects(within(before, ROUND_TRIPS_MS + 1000, 'the create answered'), { code: 'INVALIDACL' });
    await within(auth, ROUND_TRIPS_MS + 1000, 'the credentials accepted');
    await within(Promise.all(ahead), ROUND_TRIPS_MS + 1000, 'the 40 answered');
    await client.create('/batched-after-auth', 'x', { acl: CREATOR_ALL_ACL });
  });
});
