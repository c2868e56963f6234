import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ZooKeeperClient } from '../../src/index.js';
import { LockError, Mutex, NonReentrantMutex, ReadWriteLock, Semaphore, SimpleLock } from '../../src/index.js';
import { ROUND_TRIPS_MS } from '../support/bounds.js';
import { RecipeFixture, within } from './fixtures.js';

/** The session timeout the tests' client asks for, and the server grants (FAST_SERVER allows up to 20 s). */
const SESSION_TIMEOUT = 4000;

/** Every lock that hands out leases with a liveness proof, made with `safetyMargin`. */
const LOCKS: readonly [string, (client: ZooKeeperClient, path: string, safetyMargin: number) => { acquire(o?: { timeout?: number }): Promise<unknown> }][] = [
  ['Mutex', (c, p, safetyMargin) => new Mutex(c, p, { safetyMargin })],
  ['NonReentrantMutex', (c, p, safetyMargin) => new NonReentrantMutex(c, p, { safetyMargin })],
  ['ReadLock', (c, p, safetyMargin) => new ReadWriteLock(c, p, { safetyMargin }).readLock],
  ['WriteLock', (c, p, safetyMargin) => new ReadWriteLock(c, p, { safetyMargin }).writeLock],
  ['Semaphore', (c, p, safetyMargin) => new Semaphore(c, p, 2, { safetyMargin })],
  ['SimpleLock', (c, p, safetyMargin) => new SimpleLock(c, `${p}/node`, { safetyMargin })],
];

function namesSafetyMargin(path: string): (error: unknown) => boolean {
  return (error) => {
    assert.ok(error instanceof LockError, `a LockError, got ${String(error)}`);
    assert.equal(error.code, 'INVALID_ARGUMENT');
    assert.match(error.message, /safetyMargin/);
    assert.ok(error.path?.startsWith(path), `the lock's path, got ${error.path}`);
    return true;
  };
}

/**
 * Issue 25, item 5: a NaN margin turned the early abort off (the proof "runs out" at NaN, never
 * before), a negative one aborted only after the leader may have expired the session. Refused
 * like every other duration: what can be judged alone when the lock is made, the bound of the
 * session timeout (known once a session is negotiated) at each acquire, before any request.
 */
describe('safetyMargin is validated (issue 25)', () => {
  let zk: RecipeFixture;
  let client: ZooKeeperClient;
  before(async () => {
    zk = await RecipeFixture.start();
    client = await zk.client({ sessionTimeout: SESSION_TIMEOUT });
    assert.equal(client.sessionTimeout, SESSION_TIMEOUT, 'the timeout asked for is granted');
  });
  after(async () => {
    await zk?.close();
  });

  for (const [name, make] of LOCKS) {
    it(`${name}: NaN, a negative or an infinite margin is INVALID_ARGUMENT when the lock is made`, () => {
      const path = `/sm/made/${name}`;
      for (const margin of [Number.NaN, -1, Number.POSITIVE_INFINITY, '100' as unknown as number]) {
        assert.throws(() => make(client, path, margin), namesSafetyMargin(path), `safetyMargin ${String(margin)}`);
      }
    });

    it(`${name}: a margin of the whole session timeout or more is INVALID_ARGUMENT at acquire and creates nothing; 0 is a margin`, async () => {
      const path = `/sm/acquire/${name}`;
      for (const margin of [SESSION_TIMEOUT, SESSION_TIMEOUT * 2]) {
        await assert.rejects(within(make(client, path, margin).acquire({ timeout: ROUND_TRIPS_MS }), ROUND_TRIPS_MS, 'acquire rejects'), namesSafetyMargin(path));
      }
      assert.equal(await zk.admin.exists(path), null, 'not even the lock path was created');
      const lease = (await make(client, path, 0).acquire({ timeout: ROUND_TRIPS_MS })) as { held: boolean; release(): Promise<void> };
      assert.ok(lease.held, 'a margin of 0 holds');
      await lease.release();
    });
  }
});
