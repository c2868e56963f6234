import { after, before, describe, it } from 'node:test';
import { Mutex } from '../../src/index.js';
import { sessionBound } from '../support/bounds.js';
import { nextEvent } from '../support/wait.js';
import { RecipeFixture, sleep, within } from './fixtures.js';

/**
 * OVERLOADED means "not sent": an acquire may pass it on, but a release that gave up on it would
 * leave our node blocking the lock for the rest of the session. `maxQueued: 0` makes every request
 * made while disconnected meet it.
 */
describe('requests refused with OVERLOADED', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  it('a release refused while nothing may wait deletes the node once connected again', async () => {
    const sessionTimeout = 10_000;
    const { client, proxy } = await zk.viaProxy({ sessionTimeout, maxQueued: 0 });
    const lease = await new Mutex(client, '/overloaded/lock').acquire();
    proxy.refuseNew(true);
    const suspended = nextEvent(client, 'suspended', sessionBound(sessionTimeout));
    proxy.resetAll();
    await suspended;
    const released = lease.release();
    await sleep(200);
    proxy.refuseNew(false);
    await within(released, sessionBound(sessionTimeout), 'the release');
    await zk.assertNoNodes('/overloaded/lock');
  });
});
