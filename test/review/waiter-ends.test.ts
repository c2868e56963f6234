import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Mutex, ReadWriteLock, Semaphore } from '../../src/index.js';
import { ROUND_TRIPS_MS, sessionBound } from '../support/bounds.js';
import { RecipeFixture, within } from '../recipes/fixtures.js';

describe('review: waiters with nothing of their own to end their wait (no timeout, no signal) end with their client', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  for (const ending of ['close', 'expire'] as const) {
    it(`${ending}: 30 waiters on a mutex, 5 on a read lock behind them, 3 on a semaphore: every acquire rejects (renewExpiredSession: false for expire)`, async () => {
      const holder = await zk.client();
      const path = `/ends-${ending}`;
      const held = await new Mutex(holder, `${path}/m`).acquire();
      const heldSem = await new Semaphore(holder, `${path}/s`, 1).acquire();
      const { client, proxy } = await zk.viaProxy({ sessionTimeout: 2000, renewExpiredSession: ending === 'close' });
      const acquires: Promise<unknown>[] = [];
      for (let i = 0; i < 30; i++) acquires.push(new Mutex(client, `${path}/m`).acquire());
      for (let i = 0; i < 5; i++) acquires.push(new ReadWriteLock(client, `${path}/m`).readLock.acquire());
      for (let i = 0; i < 3; i++) acquires.push(new Semaphore(client, `${path}/s`, 1).acquire());
      const outcomes = acquires.map((p) => p.then(() => 'acquired', (error: unknown) => `rejected ${(error as { code?: string }).code}`));
      // Everyone queued: 36 nodes under m (holder + 35), and the semaphore's waiters in its queue.
      await within(
        (async () => {
          while ((await zk.children(`${path}/m`)).length < 36 || (await zk.children(`${path}/s/locks`)).length < 3) await new Promise((resolve) => setTimeout(resolve, 20));
        })(),
        ROUND_TRIPS_MS,
        'everyone queued',
      );
      if (ending === 'close') void client.close();
      else proxy.blackhole();
      const results = await within(Promise.all(outcomes), sessionBound(2000) + ROUND_TRIPS_MS, 'every acquire settled');
      assert.ok(results.every((r) => r.startsWith('rejected')), results.join(', '));
      await held.release();
      await heldSem.release();
      if (ending === 'expire') {
        proxy.passThrough();
        await client.close();
      }
    });
  }

  it('expired and renewed: the 30 mutex waiters queue again with the new session and each gets the lock in turn', async () => {
    const holder = await zk.client();
    const path = '/ends-renew';
    const held = await new Mutex(holder, path).acquire();
    const { client, proxy } = await zk.viaProxy({ sessionTimeout: 2000 });
    let holding = 0;
    let overlap = false;
    const acquires = Array.from({ length: 30 }, async () => {
      const lease = await new Mutex(client, path).acquire();
      if (++holding > 1) overlap = true;
      await new Promise((resolve) => setTimeout(resolve, 2));
      holding--;
      await lease.release();
    });
    await within(
      (async () => {
        while ((await zk.children(path)).length < 31) await new Promise((resolve) => setTimeout(resolve, 20));
      })(),
      ROUND_TRIPS_MS,
      'everyone queued',
    );
    const first = client.sessionId;
    const expired = new Promise((resolve) => client.once('expired', resolve));
    proxy.blackhole();
    await within(expired, sessionBound(2000) + ROUND_TRIPS_MS, 'expired');
    proxy.passThrough();
    await held.release();
    await within(Promise.all(acquires), 3 * ROUND_TRIPS_MS, 'every waiter got the lock');
    assert.notEqual(client.sessionId, first);
    assert.equal(overlap, false);
    assert.deepEqual(await zk.children(path), []);
  });
});
