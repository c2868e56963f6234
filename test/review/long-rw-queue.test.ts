import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ReadWriteLock } from '../../src/index.js';
import type { ZooKeeperClient } from '../../src/index.js';
import { WAITER_TIMEOUT_MS } from '../support/bounds.js';
import { RecipeFixture, sleep, within } from '../recipes/fixtures.js';

describe('review: a long read/write queue with waiters that give up (timeouts, aborts) and readers far behind many writers', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  it('no writer shares the lock, and every waiter that does not give up gets in', async () => {
    const path = '/long-rw';
    const clients: ZooKeeperClient[] = [];
    for (let i = 0; i < 3; i++) clients.push(await zk.client({ sessionTimeout: 10_000 }));
    const observer = await zk.client();
    await observer.ensurePath(path);
    let readers = 0;
    let writers = 0;
    const violations: string[] = [];
    const failures: string[] = [];
    let gaveUp = 0;
    let held = 0;
    const one = async (client: ZooKeeperClient, kind: 'read' | 'write', giveUpMs: number | undefined): Promise<void> => {
      const rw = new ReadWriteLock(client, path);
      const lock = kind === 'read' ? rw.readLock : rw.writeLock;
      let lease;
      try {
        lease = await lock.acquire(giveUpMs === undefined ? { timeout: WAITER_TIMEOUT_MS } : { signal: AbortSignal.timeout(giveUpMs) });
      } catch (error) {
        if (giveUpMs !== undefined && /ABORTED|TIMEOUT/.test(String((error as { code?: string }).code))) gaveUp++;
        else failures.push(`${kind}: ${String(error)}`);
        return;
      }
      held++;
      if (kind === 'write') {
        writers++;
        if (writers > 1 || readers > 0) violations.push(`writer with ${writers - 1} writers and ${readers} readers`);
      } else {
        readers++;
        if (writers > 0) violations.push(`reader with ${writers} writers`);
      }
      await sleep(1 + Math.random() * 3);
      if (kind === 'write') writers--;
      else readers--;
      await lease.release();
    };
    const rounds = Array.from({ length: 3 }, async (_, round) => {
      await sleep(round * 50);
      const jobs: Promise<void>[] = [];
      for (let i = 0; i < 45; i++) {
        const kind = i % 9 === 8 || (i > 25 && i % 2 === 0) ? 'read' : 'write';
        const giveUp = i % 5 === 2 ? 5 + Math.floor(Math.random() * 60) : undefined;
        jobs.push(one(clients[i % clients.length]!, kind, giveUp));
      }
      await Promise.all(jobs);
    });
    await within(Promise.all(rounds), 4 * WAITER_TIMEOUT_MS, 'every contender done');
    assert.deepEqual(violations, []);
    assert.deepEqual(failures, []);
    assert.equal(held + gaveUp, 135);
    assert.deepEqual((await observer.getChildren(path)).children, []);
  });
});
