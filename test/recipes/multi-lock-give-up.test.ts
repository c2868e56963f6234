import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import { MultiLock, Mutex, NonReentrantMutex } from '../../src/index.js';
import { ROUND_TRIPS_MS, WAITER_TIMEOUT_MS, sessionBound } from '../support/bounds.js';
import { eventually } from '../support/wait.js';
import { RecipeFixture, isLockError, within } from './fixtures.js';

/** Long: the give-up must not wait for the client to notice a silent connection (2/3 of it) or for a reconnect. */
const SESSION_TIMEOUT = 20_000;
/** What a Mutex's own give-up waits at most once its deadline passed (awaitBriefly in abandon.ts), for each of the two steps here, plus room for a loaded machine. */
const GIVE_UP_BOUND_MS = 2 * 1000 + 4000;

describe('MultiLock gives up like the queue locks (issue 25)', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  for (const how of ['timeout', 'abort'] as const) {
    it(`a ${how} on a silent connection rejects within about a second, not after a reconnect; the lock taken is released in the background once the connection is back`, async () => {
      const paths = [`/ml/${how}/a`, `/ml/${how}/b`];
      const { client, proxy } = await zk.viaProxy({ sessionTimeout: SESSION_TIMEOUT });
      const rival = await new Mutex(await zk.client(), paths[1]!).acquire({ timeout: ROUND_TRIPS_MS });
      const controller = new AbortController();
      const deadline = 1500;
      const started = performance.now();
      const acquiring = new MultiLock(paths.map((path) => new Mutex(client, path))).acquire(how === 'timeout' ? { timeout: deadline } : { signal: controller.signal });
      acquiring.catch(() => undefined);
      // The first lock taken, our place in the second's queue: then the connection goes silent (half-open).
      await eventually(async () => (await zk.children(paths[0]!)).length === 1 && (await zk.children(paths[1]!)).length === 2, ROUND_TRIPS_MS, 'the first lock taken, queued for the second');
      proxy.blackhole('both');
      const ended = performance.now() + Math.max(0, deadline - (performance.now() - started));
      if (how === 'abort') setTimeout(() => controller.abort(new Error('caller gave up')), Math.max(0, ended - performance.now()));
      await assert.rejects(within(acquiring, deadline + GIVE_UP_BOUND_MS + ROUND_TRIPS_MS, 'the acquire rejects'), isLockError(how === 'timeout' ? 'LOCK_TIMEOUT' : 'ABORTED'));
      const late = performance.now() - ended;
      assert.ok(late < GIVE_UP_BOUND_MS, `rejected ${Math.round(late)} ms after the deadline (a Mutex gives up within about a second; a reconnect takes ${(2 / 3) * SESSION_TIMEOUT} ms to even begin)`);
      // Back: the releases that went on in the background finish, and the rival's lock is the only node left.
      proxy.resetAll();
      proxy.passThrough();
      await zk.assertNoNodes(paths[0]!, 'the lock taken was released once the connection was back');
      await eventually(async () => (await zk.children(paths[1]!)).length === 1, sessionBound(SESSION_TIMEOUT), 'our place in the second queue went');
      await rival.release();
    });
  }

  it('inside its runExclusive, a Mutex of the set re-enters at once; any other acquire of one of its locks fails fast with WOULD_DEADLOCK', async () => {
    const client = await zk.client();
    const [a, b] = [new Mutex(client, '/ml/reenter/a'), new NonReentrantMutex(client, '/ml/reenter/b')];
    const multi = new MultiLock([a, b]);
    const result = await within(
      multi.runExclusive(async (lease) => {
        const inner = await a.runExclusive((reentered) => {
          assert.equal(reentered, lease.leases[0], "the multi-lock's own lease of that lock");
          return 'reentered';
        }, { timeout: WAITER_TIMEOUT_MS });
        await assert.rejects(a.acquire({ timeout: WAITER_TIMEOUT_MS }), isLockError('WOULD_DEADLOCK'));
        await assert.rejects(b.acquire({ timeout: WAITER_TIMEOUT_MS }), isLockError('WOULD_DEADLOCK'));
        await assert.rejects(b.runExclusive(() => undefined, { timeout: WAITER_TIMEOUT_MS }), isLockError('WOULD_DEADLOCK'));
        await assert.rejects(new MultiLock([a]).acquire({ timeout: WAITER_TIMEOUT_MS }), isLockError('WOULD_DEADLOCK'));
        assert.deepEqual([(await zk.children('/ml/reenter/a')).length, (await zk.children('/ml/reenter/b')).length], [1, 1], 'no second node of ours queued');
        return inner;
      }),
      ROUND_TRIPS_MS,
      'runExclusive with a re-entry inside',
    );
    assert.equal(result, 'reentered');
    await zk.assertNoNodes('/ml/reenter/a');
    await zk.assertNoNodes('/ml/reenter/b');
    // Outside the section, the mutex is an ordinary one again.
    const lease = await a.acquire({ timeout: ROUND_TRIPS_MS });
    assert.ok(lease.held);
    await lease.release();
  });
});
