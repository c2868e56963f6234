import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import type { Lease, ZooKeeperClient } from '../../src/index.js';
import { LockError, Mutex, NonReentrantMutex, sortContenders } from '../../src/index.js';
import { ROUND_TRIPS_MS, WAITER_TIMEOUT_MS, sessionBound } from '../support/bounds.js';
import { JsonLineProcess } from '../support/json-line-process.js';
import { serverWatches } from '../support/server-watches.js';
import { eventually } from '../support/wait.js';
import { RecipeFixture, isLockError, recordRequests, within } from './fixtures.js';

/** Debian's python3-kazoo lives in the system interpreter (see interop.test.ts). */
const PYTHON = '/usr/bin/python3';
const KAZOO_WORKER = fileURLToPath(new URL('./fixtures/kazoo_worker.py', import.meta.url));

/**
 * Lock-delay (src/recipes/lock-delay.ts): after a handoff not proven clean the next holder keeps
 * its node `lockDelay` ms before its acquire resolves; a clean release passes the lock on at once.
 * Times are on this process's performance.now(), the clock the lock's own wait uses; the lower
 * bounds are what the feature promises, never a claim of speed.
 */
describe('lock-delay after an unclean handoff', { timeout: 240_000 }, () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  /** Lets a lockDelay lock on `path` start with a clean history: one hold released cleanly (its own delay of 1 ms served). */
  async function cleanHistory(client: ZooKeeperClient, path: string): Promise<void> {
    const lease = await new Mutex(client, path, { lockDelay: 1 }).acquire({ timeout: ROUND_TRIPS_MS });
    await lease.release();
  }

  /** When a client other than the contenders hears that `node` is gone (performance.now()). */
  async function observeDeletion(client: ZooKeeperClient, node: string): Promise<{ deleted: Promise<number> }> {
    let seen!: (at: number) => void;
    const deleted = new Promise<number>((resolve) => (seen = resolve));
    const stat = await client.exists(node, { watch: (event) => event.type === 'deleted' && seen(performance.now()) });
    assert.ok(stat, `${node} exists while watched`);
    // Wrapped: an async function's returned promise would be awaited with it.
    return { deleted };
  }

  /**
   * Until `client`'s session watches `node`: a waiter then has read the node it waits for, so it
   * knows whose it was (one gone before it looked could be anyone's: 'unknown').
   */
  async function watching(client: ZooKeeperClient, node: string): Promise<void> {
    await eventually(async () => (await serverWatches(zk.server, client.sessionId)).includes(node), ROUND_TRIPS_MS, `a watch on ${node}`);
  }

  /** A waiter's acquire with its resolution time. */
  function waitFor(mutex: Mutex, timeout: number): Promise<{ lease: Lease; at: number }> {
    return mutex.acquire({ timeout }).then((lease) => ({ lease, at: performance.now() }));
  }

  it("a holder's session expired by a partition: the next holder resolves no sooner than lockDelay after its node went, and says 'unclean'", async () => {
    const path = '/delay/expired';
    const lockDelay = 2000;
    const observer = await zk.client();
    await cleanHistory(observer, path);
    const { client, proxy } = await zk.viaProxy({ sessionTimeout: 2000 });
    const holder = await new Mutex(client, path, { lockDelay }).acquire({ timeout: ROUND_TRIPS_MS });
    assert.equal(holder.handoff, 'clean', 'after a clean release the lock comes at once');
    const { deleted: gone } = await observeDeletion(observer, holder.node);
    const other = await zk.client();
    const waiting = waitFor(new Mutex(other, path, { lockDelay }), sessionBound(client.sessionTimeout) + lockDelay + ROUND_TRIPS_MS);
    await watching(other, holder.node);
    proxy.blackhole('both');
    const goneAt = await within(gone, sessionBound(client.sessionTimeout), "the server expires the holder's session");
    const next = await within(waiting, lockDelay + ROUND_TRIPS_MS, 'the waiter acquires after the delay');
    // The waiter may hear of the deletion a little before the observer does: 100 ms of slack for that.
    assert.ok(next.at >= goneAt + lockDelay - 100, `resolved ${(next.at - goneAt).toFixed(0)} ms after the old holder's node went (lockDelay ${lockDelay})`);
    assert.equal(next.lease.handoff, 'unclean');
    assert.ok(next.lease.lockDelayed > 0, `delayed ${next.lease.lockDelayed} ms`);
    assert.equal(holder.signal.aborted, true, 'the old holder knows it lost the lock');
    assert.deepEqual(await zk.children(path), [next.lease.node.slice(path.length + 1)], 'the new holder is the only contender');
    await next.lease.release();
    proxy.passThrough();
    await zk.assertNoNodes(path);
  });

  it("a holder's node deleted by someone else (a forced release): delayed, 'unclean'", async () => {
    const path = '/delay/forced';
    const lockDelay = 1000;
    const client = await zk.client();
    await cleanHistory(client, path);
    const holder = await new NonReentrantMutex(client, path, { lockDelay }).acquire({ timeout: ROUND_TRIPS_MS });
    const other = await zk.client();
    const waiting = waitFor(new Mutex(other, path, { lockDelay }), WAITER_TIMEOUT_MS);
    await watching(other, holder.node);
    const deleting = performance.now();
    await zk.admin.delete(holder.node);
    const next = await within(waiting, lockDelay + ROUND_TRIPS_MS, 'the waiter acquires after the delay');
    assert.ok(next.at >= deleting + lockDelay, `resolved ${(next.at - deleting).toFixed(0)} ms after the forced delete (lockDelay ${lockDelay})`);
    assert.equal(next.lease.handoff, 'unclean');
    await eventually(() => holder.signal.aborted, ROUND_TRIPS_MS, 'the old holder hears of its loss');
    await holder.release();
    // The new holder releases cleanly: the one after it is not delayed.
    await next.lease.release();
    const after = await new Mutex(client, path, { lockDelay: 60_000 }).acquire({ timeout: ROUND_TRIPS_MS });
    assert.equal(after.handoff, 'clean');
    await after.release();
    await zk.assertNoNodes(path);
  });

  it("a clean release passes the lock on at once, to a waiter, to a newcomer and to the same lock again: 'clean'", async () => {
    const path = '/delay/clean';
    // Far beyond every acquire's timeout here: any delay would fail the test.
    const lockDelay = 60_000;
    const [a, b, c] = [await zk.client(), await zk.client(), await zk.client()];
    await cleanHistory(a, path);
    const first = await new Mutex(a, path, { lockDelay }).acquire({ timeout: ROUND_TRIPS_MS });
    assert.deepEqual([first.handoff, first.lockDelayed], ['clean', 0], 'a newcomer after a clean release');
    // Two waiters: the second follows the first's blocker (the lookahead) and holds after the first.
    const mutexB = new Mutex(b, path, { lockDelay });
    const second = waitFor(mutexB, ROUND_TRIPS_MS);
    await eventually(async () => (await zk.children(path)).length === 2, ROUND_TRIPS_MS, 'second queued');
    const third = waitFor(new Mutex(c, path, { lockDelay }), 2 * ROUND_TRIPS_MS);
    await eventually(async () => (await zk.children(path)).length === 3, ROUND_TRIPS_MS, 'third queued');
    await first.release();
    const secondLease = (await second).lease;
    assert.deepEqual([secondLease.handoff, secondLease.lockDelayed], ['clean', 0], 'the waiter right behind');
    await secondLease.release();
    const thirdLease = (await third).lease;
    assert.deepEqual([thirdLease.handoff, thirdLease.lockDelayed], ['clean', 0], 'the waiter after it');
    await thirdLease.release();
    // The same lock object again, nobody queued since its last hold: no listing, still clean.
    const again = await mutexB.acquire({ timeout: ROUND_TRIPS_MS });
    await again.release();
    const onceMore = await mutexB.acquire({ timeout: ROUND_TRIPS_MS });
    assert.equal(onceMore.handoff, 'clean');
    await onceMore.release();
    await zk.assertNoNodes(path);
  });

  it('the deadline passing during the delay rejects with LOCK_TIMEOUT, leaves no node, and the lock is free for others', async () => {
    const path = '/delay/deadline';
    const client = await zk.client();
    // A lock path not made yet: nothing to prove a clean handoff, so the delay applies.
    const started = performance.now();
    await assert.rejects(new Mutex(client, path, { lockDelay: 60_000 }).acquire({ timeout: 1000 }), isLockError('LOCK_TIMEOUT'));
    assert.ok(performance.now() - started < 60_000, 'rejected at the deadline, not after the delay');
    await zk.assertNoNodes(path);
    const aborter = new AbortController();
    const aborted = new Mutex(client, path, { lockDelay: 60_000 }).acquire({ signal: aborter.signal });
    await eventually(async () => (await zk.children(path)).length === 1, ROUND_TRIPS_MS, 'holding through the delay');
    aborter.abort();
    await assert.rejects(aborted, isLockError('ABORTED'));
    await zk.assertNoNodes(path);
    const other = await new Mutex(await zk.client(), path).tryAcquire();
    assert.ok(other, 'the lock is free');
    await other.release();
  });

  it("a missing lock path: 'unknown', delayed once; the path stays (persistent) and the next handoff is clean", async () => {
    const path = '/delay/missing/lock';
    const lockDelay = 500;
    const client = await zk.client();
    const started = performance.now();
    const lease = await new Mutex(client, path, { lockDelay }).acquire({ timeout: ROUND_TRIPS_MS });
    assert.ok(performance.now() - started >= lockDelay, 'the acquire waited the delay');
    assert.equal(lease.handoff, 'unknown');
    assert.ok(lease.lockDelayed > 0);
    await lease.release();
    const stat = await zk.admin.exists(path);
    assert.equal(stat?.ephemeralOwner, 0n, 'the lock path is a persistent node, not a container the server may reap');
    const next = await new Mutex(await zk.client(), path, { lockDelay: 60_000 }).acquire({ timeout: ROUND_TRIPS_MS });
    assert.deepEqual([next.handoff, next.lockDelayed], ['clean', 0]);
    await next.release();
  });

  it('tryAcquire on a free lock after an unclean handoff takes it, and resolves after the delay', async () => {
    const path = '/delay/try';
    const lockDelay = 300;
    const started = performance.now();
    const lease = await new Mutex(await zk.client(), path, { lockDelay }).tryAcquire();
    assert.ok(lease, 'nobody holds or waits: the lock is ours');
    assert.ok(performance.now() - started >= lockDelay);
    assert.equal(lease.handoff, 'unknown');
    await lease.release();
  });

  it('a lock without lockDelay says nothing of the handoff, never reads the lock path and never waits', async () => {
    const client = await zk.client();
    const sent = recordRequests(client);
    const lease = await new Mutex(client, '/delay/off').acquire({ timeout: ROUND_TRIPS_MS });
    assert.deepEqual([lease.handoff, lease.lockDelayed], [undefined, 0]);
    assert.ok(!sent.includes('getData /delay/off'), sent.join(', '));
    await lease.release();
  });

  it("a newcomer after a holder's node was deleted finds nobody ahead, and the record of the release before does not pass for a clean handoff", async () => {
    const path = '/delay/newcomer';
    const lockDelay = 1000;
    const client = await zk.client();
    await cleanHistory(client, path);
    const holder = await new Mutex(client, path, { lockDelay }).acquire({ timeout: ROUND_TRIPS_MS });
    assert.equal(holder.handoff, 'clean');
    await zk.admin.delete(holder.node);
    const started = performance.now();
    const next = await new Mutex(await zk.client(), path, { lockDelay }).acquire({ timeout: ROUND_TRIPS_MS });
    assert.ok(performance.now() - started >= lockDelay, 'the newcomer waited the delay');
    assert.equal(next.handoff, 'unclean');
    await next.release();
    await holder.release();
    await zk.assertNoNodes(path);
  });

  it("a hold limit's forced release is no clean handoff, not even to the same lock object taking it again with nobody queued since", async () => {
    const path = '/delay/hold-limit';
    const lockDelay = 1000;
    const client = await zk.client();
    await cleanHistory(client, path);
    const mutex = new Mutex(client, path, { lockDelay });
    const hung = await mutex.acquire({ timeout: ROUND_TRIPS_MS, maxHold: 100, forceReleaseAfter: 100 });
    assert.equal(hung.handoff, 'clean');
    // The holder never releases: its own client deletes the node after the hold limit and the grace.
    await eventually(async () => (await zk.children(path)).length === 0, ROUND_TRIPS_MS, 'the forced release');
    const started = performance.now();
    const next = await mutex.acquire({ timeout: ROUND_TRIPS_MS });
    assert.ok(performance.now() - started >= lockDelay, 'the next hold waited the delay');
    assert.equal(next.handoff, 'unclean');
    await next.release();
    await hung.release();
    await zk.assertNoNodes(path);
  });

  it('a lockDelay that is not a number of ms from 0 to 2^31-1 is refused with INVALID_ARGUMENT naming the path', async () => {
    const client = await zk.client();
    for (const lockDelay of [-1, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31, '5' as unknown as number]) {
      assert.throws(
        () => new Mutex(client, '/delay/bad', { lockDelay }),
        (error) => error instanceof LockError && error.code === 'INVALID_ARGUMENT' && error.path === '/delay/bad',
        String(lockDelay),
      );
    }
  });

  it("a kazoo holder's release leaves no record: 'unknown', delayed", async () => {
    const path = '/delay/kazoo';
    const lockDelay = 500;
    const client = await zk.client();
    const holder = new JsonLineProcess('kazoo worker', PYTHON, [KAZOO_WORKER, '--hosts', zk.server.connectString, '--path', path, '--mode', 'hold']);
    await holder.line('held');
    const waiting = new Mutex(client, path, { lockDelay, layout: 'kazoo' }).acquire({ timeout: WAITER_TIMEOUT_MS });
    await eventually(async () => (await zk.children(path)).length === 2, ROUND_TRIPS_MS, 'zklock waiter queued');
    await watching(client, `${path}/${sortContenders(await zk.children(path))[0]!.name}`);
    const releasing = performance.now();
    holder.send('');
    assert.equal(await holder.exited, 0);
    const lease = await within(waiting, lockDelay + ROUND_TRIPS_MS, 'the zklock waiter acquires');
    assert.ok(performance.now() - releasing >= lockDelay);
    assert.equal(lease.handoff, 'unknown');
    await lease.release();
    await zk.assertNoNodes(path);
  });
});
