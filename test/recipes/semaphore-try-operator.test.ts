import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Semaphore } from '../../src/index.js';
import type { ZooKeeperClient } from '../../src/index.js';
import { WAITER_TIMEOUT_MS } from '../support/bounds.js';
import { RecipeFixture, sharedNow, sleep, within } from './fixtures.js';

describe('tryAcquire on a semaphore whose queue nodes an operator deletes while contenders take turns', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  it('a tryAcquire whose queue node an operator deleted never rejects with SESSIONEXPIRED while its session lives; never more holders than maxLeases', async () => {
    const path = '/sem-op';
    const maxLeases = 3;
    const clients: ZooKeeperClient[] = [];
    for (let i = 0; i < 6; i++) clients.push(await zk.client({ sessionTimeout: 10_000 }));
    const observer = await zk.client();
    await observer.ensurePath(path);
    let stop = false;
    let maxSeen = 0;
    const watching = (async () => {
      while (!stop) {
        const leases = await observer.getChildren(`${path}/leases`).then((r) => r.children.length, () => 0);
        maxSeen = Math.max(maxSeen, leases);
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    let deleted = 0;
    const operator = (async () => {
      while (!stop) {
        const queue = await observer.getChildren(`${path}/locks`).then((r) => r.children, () => [] as string[]);
        if (queue.length > 0) {
          const victim = queue[Math.floor(Math.random() * queue.length)]!;
          await observer.delete(`${path}/locks/${victim}`).then(() => deleted++, () => undefined);
        }
        await sleep(Math.random() * 15);
      }
    })();
    const holds: { start: number; end: number; count: number }[] = [];
    const failures: unknown[] = [];
    const contenders = clients.map(async (client) => {
      const sem = new Semaphore(client, path, maxLeases);
      for (let cycle = 0; cycle < 30; cycle++) {
        const count = cycle % 3 === 0 ? 2 : 1;
        let lease;
        try {
          lease = await sem.tryAcquire({ leases: count });
          if (!lease) { cycle--; await sleep(1); continue; }
        } catch (error) {
          failures.push(error);
          continue;
        }
        const start = sharedNow();
        await sleep(3);
        holds.push({ start, end: sharedNow(), count });
        await lease.release();
      }
    });
    try {
      await within(Promise.all(contenders), 4 * WAITER_TIMEOUT_MS, 'every contender done');
    } finally {
      stop = true;
      await Promise.all([watching, operator]);
    }
    assert.ok(deleted > 0, 'the operator deleted queue nodes');
    const points = holds.flatMap((h) => [{ t: h.start, d: h.count }, { t: h.end, d: -h.count }]).sort((a, b) => a.t - b.t || a.d - b.d);
    let now = 0;
    for (const p of points) {
      now += p.d;
      assert.ok(now <= maxLeases, `${now} holders at once`);
    }
    // Sessions all live: an operator deleting the queue node is not a SESSIONEXPIRED (tryAcquire: null, or try again).
    assert.deepEqual(failures.map((e) => String(e)), [], 'no tryAcquire failed');
    // maxSeen can pass maxLeases for a moment in tryAcquire's two steps (a lease made by a head whose queue node went, deleted before it is handed out): not asserted.
    void maxSeen;

    assert.deepEqual((await observer.getChildren(`${path}/leases`)).children, []);
  });
});
