import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Lease } from '../../src/index.js';
import { Mutex, ReadWriteLock, Semaphore, SimpleLock, ZooKeeperClient } from '../../src/index.js';
import { RecipeFixture, onRequests, sleep, within } from './fixtures.js';

// Finding the chroot missing takes a create per level of the lock path, each bounded by the request timeout.
const PROMPT_MS = 30_000;

interface Recipe {
  name: string;
  acquire(client: ZooKeeperClient, timeout: number): Promise<Lease>;
  tryAcquire(client: ZooKeeperClient): Promise<Lease | null>;
}

const RECIPES: Recipe[] = [
  { name: 'Mutex', acquire: (c, timeout) => new Mutex(c, '/locks/m').acquire({ timeout }), tryAcquire: (c) => new Mutex(c, '/locks/m').tryAcquire() },
  {
    name: 'ReadWriteLock (read)',
    acquire: (c, timeout) => new ReadWriteLock(c, '/locks/rw').readLock.acquire({ timeout }),
    tryAcquire: (c) => new ReadWriteLock(c, '/locks/rw').readLock.tryAcquire(),
  },
  {
    name: 'ReadWriteLock (write)',
    acquire: (c, timeout) => new ReadWriteLock(c, '/locks/rw').writeLock.acquire({ timeout }),
    tryAcquire: (c) => new ReadWriteLock(c, '/locks/rw').writeLock.tryAcquire(),
  },
  { name: 'Semaphore', acquire: (c, timeout) => new Semaphore(c, '/locks/s', 2).acquire({ timeout }), tryAcquire: (c) => new Semaphore(c, '/locks/s', 2).tryAcquire() },
  { name: 'SimpleLock', acquire: (c, timeout) => new SimpleLock(c, '/locks/simple').acquire({ timeout }), tryAcquire: (c) => new SimpleLock(c, '/locks/simple').tryAcquire() },
  // A queue at the chroot's root: its contenders' parent is the chroot itself, as below.
  { name: 'Mutex (at the root)', acquire: (c, timeout) => new Mutex(c, '/').acquire({ timeout }), tryAcquire: (c) => new Mutex(c, '/').tryAcquire() },
  // Its node's parent is the chroot itself: nothing to ensure below it, the create is refused again and again.
  { name: 'SimpleLock (top-level node)', acquire: (c, timeout) => new SimpleLock(c, '/simple').acquire({ timeout }), tryAcquire: (c) => new SimpleLock(c, '/simple').tryAcquire() },
];

function chrootMissing(error: unknown): boolean {
  assert.equal((error as { code?: string }).code, 'CHROOT_MISSING', String(error));
  assert.match((error as Error).message, /\/missing-chroot/, 'the message names the chroot');
  return true;
}

describe('lock recipes on a connect string whose chroot does not exist', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  for (const recipe of RECIPES) {
    it(`${recipe.name}: acquire and tryAcquire reject at once with CHROOT_MISSING, and nothing keeps sending`, async () => {
      const client = await ZooKeeperClient.connect(`${zk.server.connectString}/missing-chroot`, { sessionTimeout: 10_000 });
      let creates = 0;
      onRequests(client, new Set(['create', 'multi']), () => creates++);
      try {
        // A timeout longer than the bound of the wait: LOCK_TIMEOUT here would be the old misleading answer.
        await assert.rejects(within(recipe.acquire(client, 2 * PROMPT_MS), PROMPT_MS, 'acquire'), chrootMissing);
        await assert.rejects(within(recipe.tryAcquire(client), PROMPT_MS, 'tryAcquire'), chrootMissing);
        const sent = creates;
        await sleep(500);
        assert.equal(creates, sent, 'no create after the rejections');
      } finally {
        await client.close();
      }
      assert.equal(await zk.admin.exists('/missing-chroot'), null, 'the chroot was not created behind the user\'s back');
    });
  }
});
