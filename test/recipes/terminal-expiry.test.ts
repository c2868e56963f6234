import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ZooKeeperClient } from '../../src/index.js';
import { Mutex, Semaphore, SimpleLock, ZooKeeperError } from '../../src/index.js';
import { nextEvent } from '../support/wait.js';
import { RecipeFixture, within } from './fixtures.js';

/**
 * With renewExpiredSession: false an expired client refuses every request at once. Before, an
 * acquire retried that refusal in a loop of promise callbacks that never yielded to timers: the
 * acquire's own timeout could not fire, and neither could any other timer of the process.
 */
describe('lock recipes on a client whose session expired for good', () => {
  let zk: RecipeFixture;
  let client: ZooKeeperClient;
  before(async () => {
    zk = await RecipeFixture.start();
    const { client: expiring, proxy } = await zk.viaProxy({ sessionTimeout: 1000, renewExpiredSession: false });
    const expired = nextEvent(expiring, 'expired', 30_000);
    proxy.blackhole('both');
    await expired;
    client = expiring;
  });
  after(async () => {
    await zk?.close();
  });

  const kinds = [
    { name: 'Mutex', acquire: () => new Mutex(client, '/terminal/mutex').acquire({ timeout: 60_000 }) },
    { name: 'Semaphore', acquire: () => new Semaphore(client, '/terminal/semaphore', 2).acquire({ timeout: 60_000 }) },
    { name: 'SimpleLock', acquire: () => new SimpleLock(client, '/terminal/simple').acquire({ timeout: 60_000 }) },
  ];
  for (const { name, acquire } of kinds) {
    // A regression would spin without yielding: this test would then hang rather than fail, as no timer could fire.
    it(`${name}.acquire rejects with SESSIONEXPIRED at once instead of spinning`, async () => {
      await assert.rejects(within(acquire(), 20_000, 'acquire settles'), (e) => e instanceof ZooKeeperError && e.code === 'SESSIONEXPIRED');
    });
  }

  it('waitForConnected rejects with SESSIONEXPIRED at once instead of waiting out its timeout', async () => {
    await assert.rejects(within(client.waitForConnected({ timeout: 60_000 }), 20_000, 'waitForConnected settles'), (e) => e instanceof ZooKeeperError && e.code === 'SESSIONEXPIRED');
  });

  it('addAuth rejects with SESSIONEXPIRED at once instead of waiting out the request timeout', async () => {
    await assert.rejects(within(client.addAuth('digest', 'user:secret'), 10_000, 'addAuth settles'), (e) => e instanceof ZooKeeperError && e.code === 'SESSIONEXPIRED');
  });
});
