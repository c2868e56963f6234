import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Mutex, ReadWriteLock } from '../../src/index.js';
import type { Lease, ZooKeeperClient } from '../../src/index.js';
import { WAITER_TIMEOUT_MS } from '../support/bounds.js';
import { RecipeFixture, sharedNow, sleep, within } from '../recipes/fixtures.js';

describe('review: a long exclusive queue (waiters keeping one blocker) whose waiting nodes an operator deletes', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  it('one holder at a time, and every acquire gets in', async () => {
    const path = '/long-op';
    const clients: ZooKeeperClient[] = [];
    for (let i = 0; i < 3; i++) clients.push(await zk.client({ sessionTimeout: 10_000 }));
    const observer = await zk.client();
    await observer.ensurePath(path);
    let stop = false;
    let deleted = 0;
    const holds: { who: string; start: number; end: number }[] = [];
    const current = new Set<Lease>();
    const overlaps: string[] = [];
    const operator = (async () => {
      while (!stop) {
        const queue = (await observer.getChildren(path).then((r) => r.children, () => [] as string[])).sort((a, b) => Number(a.slice(-10)) - Number(b.slice(-10)));
        // Waiters only (never the head, which may hold): so no hold is lost.
        if (queue.length > 3) {
          const victim = queue[1 + Math.floor(Math.random() * (queue.length - 1))]!;
          await observer.delete(`${path}/${victim}`).then(() => deleted++, () => undefined);
        }
        await sleep(5 + Math.random() * 20);
      }
    })();
    const failures: string[] = [];
    const workers = clients.flatMap((client, c) =>
      Array.from({ length: 10 }, async (_, w) => {
        const lock = c === 2 && w % 2 === 0 ? new ReadWriteLock(client, path).writeLock : new Mutex(client, path);
        for (let cycle = 0; cycle < 4; cycle++) {
          let lease;
          try {
            lease = await lock.acquire({ timeout: WAITER_TIMEOUT_MS });
          } catch (error) {
            failures.push(String(error));
            continue;
          }
          // Holders whose lease is still theirs (the operator's listing may be stale: it can delete a holder's node, whose lease is then lost, told by its signal).
          const others = [...current].filter((l) => !l.signal.aborted && l.held);
          if (others.length > 0 && !lease.signal.aborted) overlaps.push(`${c}.${w} got the lock while ${others.length} other held it`);
          current.add(lease);
          const start = sharedNow();
          await sleep(2);
          holds.push({ who: `${c}.${w}`, start, end: sharedNow() });
          current.delete(lease);
          await lease.release();
        }
      }),
    );
    try {
      await within(Promise.all(workers), 4 * WAITER_TIMEOUT_MS, 'every worker done');
    } finally {
      stop = true;
      await operator;
    }
    assert.ok(deleted > 0, 'the operator deleted waiting nodes');
    assert.deepEqual(overlaps, [], 'one holder at a time among leases not lost');
    assert.deepEqual(failures, []);
    assert.equal(holds.length, 120);
    assert.deepEqual((await observer.getChildren(path)).children, []);
  });
});
