import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import type { Lease, Stat } from '../../src/index.js';
import { LockError, Mutex, NonReentrantMutex, ZooKeeperClient, ZooKeeperError, sortContenders } from '../../src/index.js';
import { FaultProxy } from '../../src/testing/index.js';
import { joinedHandoff } from '../../src/recipes/queue/lock-delay.js';
import { ROUND_TRIPS_MS, WAITER_TIMEOUT_MS, sessionBound } from '../support/bounds.js';
import { JsonLineProcess } from '../support/json-line-process.js';
import { serverWatches } from '../support/server-watches.js';
import { eventually } from '../support/wait.js';
import { RecipeFixture, isLockError, recordRequests, within } from './fixtures.js';

/** Debian's python3-kazoo lives in the system interpreter (see interop.test.ts). */
const PYTHON = '/usr/bin/python3';
/** ZooKeeper's opcode for exists, and the error code a refused one is answered with. */
const EXISTS = 3;
const SYSTEMERROR = -1;
const KAZOO_WORKER = fileURLToPath(new URL('./fixtures/kazoo_worker.py', import.meta.url));

/**
 * Lock-delay (src/recipes/queue/lock-delay.ts): after a handoff not proven clean the next holder keeps
 * its node `lockDelay` ms before its acquire resolves; a clean release passes the lock on at once.
 * Times are on this process's performance.now(), the clock the lock's own wait uses; the lower
 * bounds are what the feature promises, never a claim of speed.
 */
describe('lock-delay after an unclean handoff', { timeout: 240_000 }, () => {
  let zk: RecipeFixture;
  before(async () => {
    // The container reaper every 200 ms (default: every minute), to tell a container lock path from a persistent one.
    zk = await RecipeFixture.start({ jvmArgs: ['-Dznode.container.checkIntervalMs=200'] });
  });
  after(async () => {
    await zk?.close();
  });

  /**
   * Lets a lock on `path` with this `lockDelay` start with a clean history: one hold released
   * cleanly, its own delay served (a new path is 'unknown'). A shorter delay would not do: its
   * record vouches for that delay only.
   */
  async function cleanHistory(client: ZooKeeperClient, path: string, lockDelay: number): Promise<void> {
    const lease = await new Mutex(client, path, { lockDelay }).acquire({ timeout: lockDelay + ROUND_TRIPS_MS });
    await lease.release();
  }

  /** An acquire that must wait its delay: its lease, once checked that it did. */
  async function acquireDelayed(mutex: Mutex, lockDelay: number): Promise<Lease> {
    const started = performance.now();
    const lease = await mutex.acquire({ timeout: lockDelay + ROUND_TRIPS_MS });
    const waited = performance.now() - started;
    assert.ok(waited >= lockDelay && lease.lockDelayed > 0, `waited ${waited.toFixed(0)} ms (lockDelay ${lockDelay}), lockDelayed ${lease.lockDelayed}`);
    return lease;
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
    await cleanHistory(observer, path, lockDelay);
    const { client, proxy } = await zk.viaProxy({ sessionTimeout: 2000 });
    const holder = await new Mutex(client, path, { lockDelay }).acquire({ timeout: ROUND_TRIPS_MS });
    assert.equal(holder.handoff, 'clean', 'after a clean release the lock comes at once');
    const { deleted: gone } = await observeDeletion(observer, holder.node);
    const other = await zk.client();
    const waiting = waitFor(new Mutex(other, path, { lockDelay }), sessionBound(client.sessionTimeout) + lockDelay + ROUND_TRIPS_MS);
    await watching(other, holder.node);
    // The node cannot go before the partition begins: a bound on one clock, unlike two sockets'
    // notification times (the delay counted from the node's own deletion is checked against the
    // admin's delete in the next test).
    const partitioned = performance.now();
    proxy.blackhole('both');
    await within(gone, sessionBound(client.sessionTimeout), "the server expires the holder's session");
    const next = await within(waiting, lockDelay + ROUND_TRIPS_MS, 'the waiter acquires after the delay');
    assert.ok(next.at >= partitioned + lockDelay, `resolved ${(next.at - partitioned).toFixed(0)} ms after the partition began (lockDelay ${lockDelay})`);
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
    await cleanHistory(client, path, lockDelay);
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
    const after = await new Mutex(client, path, { lockDelay }).acquire({ timeout: ROUND_TRIPS_MS });
    assert.deepEqual([after.handoff, after.lockDelayed], ['clean', 0]);
    await after.release();
    await zk.assertNoNodes(path);
  });

  it("a clean release passes the lock on at once, to a waiter, to a newcomer and to the same lock again: 'clean'", async () => {
    const path = '/delay/clean';
    // Any delay shows in `handoff` and `lockDelayed`.
    const lockDelay = 2000;
    const [a, b, c] = [await zk.client(), await zk.client(), await zk.client()];
    await cleanHistory(a, path, lockDelay);
    const first = await new Mutex(a, path, { lockDelay }).acquire({ timeout: ROUND_TRIPS_MS });
    assert.deepEqual([first.handoff, first.lockDelayed], ['clean', 0], 'a newcomer after a clean release');
    // Two waiters: the third follows the first through the lookahead while it waits for the second, and holds after it.
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
    const lease = await acquireDelayed(new Mutex(client, path, { lockDelay }), lockDelay);
    assert.equal(lease.handoff, 'unknown');
    await lease.release();
    const stat = await zk.admin.exists(path);
    assert.equal(stat?.ephemeralOwner, 0n, 'the lock path is a persistent node, not a container the server may reap');
    const next = await new Mutex(await zk.client(), path, { lockDelay }).acquire({ timeout: ROUND_TRIPS_MS });
    assert.deepEqual([next.handoff, next.lockDelayed], ['clean', 0]);
    await next.release();
  });

  it("tryAcquire on a free lock whose path is missing ('unknown') takes it, and resolves after the delay", async () => {
    const path = '/delay/try';
    const lockDelay = 300;
    const started = performance.now();
    const lease = await new Mutex(await zk.client(), path, { lockDelay }).tryAcquire();
    assert.ok(lease, 'nobody holds or waits: the lock is ours');
    assert.ok(performance.now() - started >= lockDelay);
    assert.equal(lease.handoff, 'unknown');
    await lease.release();
  });

  it('tryAcquire({ signal }) aborted during the delay rejects with ABORTED then, not when the delay ends, and leaves no node', async () => {
    const path = '/delay/try-abort';
    const client = await zk.client();
    const aborter = new AbortController();
    // A lock path not made yet: nothing proves a clean handoff, so the free lock is ours only after the delay.
    const trying = new Mutex(client, path, { lockDelay: 60_000 }).tryAcquire({ signal: aborter.signal });
    const rejected = assert.rejects(trying, (error: unknown) => {
      assert.ok(isLockError('ABORTED')(error), `ABORTED, got ${String(error)}`);
      const { cause, path: where, op, detail } = error as LockError;
      assert.deepEqual([cause === aborter.signal.reason, where, op, detail], [true, path, 'tryAcquire', 'tryAcquire aborted']);
      return true;
    });
    await eventually(async () => (await zk.children(path)).length === 1, ROUND_TRIPS_MS, 'holding through the delay');
    await watching(client, `${path}/${(await zk.children(path))[0]!}`);
    aborter.abort(new Error('caller gave up'));
    await within(rejected, ROUND_TRIPS_MS, 'the try rejects once aborted');
    await zk.assertNoNodes(path);
    const other = await new Mutex(await zk.client(), path).tryAcquire();
    assert.ok(other, 'the lock is free');
    await other.release();
  });

  it('a lock without lockDelay, or with 0, says nothing of the handoff, never reads the lock path, never waits, and its path is a container', async () => {
    const client = await zk.client();
    const sent = recordRequests(client);
    const kept = await new Mutex(client, '/delay/kept/lock', { lockDelay: 1 }).acquire({ timeout: ROUND_TRIPS_MS });
    await kept.release();
    for (const [path, options] of [['/delay/off/lock', {}], ['/delay/zero/lock', { lockDelay: 0 }]] as const) {
      const lease = await new Mutex(client, path, options).acquire({ timeout: ROUND_TRIPS_MS });
      assert.deepEqual([lease.handoff, lease.lockDelayed], [undefined, 0], path);
      assert.ok(!sent.includes(`getData ${path}`), sent.join(', '));
      await lease.release();
      // Reaped once empty: a container, as every lock path without lockDelay.
      await eventually(async () => (await zk.admin.exists(path)) === null, ROUND_TRIPS_MS, `${path} reaped`);
    }
    assert.ok(await zk.admin.exists('/delay/kept/lock'), 'a lockDelay path is persistent, and so are the parents it made');
  });

  it("a newcomer after a holder's node was deleted finds nobody ahead, and the record of the release before does not pass for a clean handoff", async () => {
    const path = '/delay/newcomer';
    const lockDelay = 1000;
    const client = await zk.client();
    await cleanHistory(client, path, lockDelay);
    const holder = await new Mutex(client, path, { lockDelay }).acquire({ timeout: ROUND_TRIPS_MS });
    assert.equal(holder.handoff, 'clean');
    await zk.admin.delete(holder.node);
    const next = await acquireDelayed(new Mutex(await zk.client(), path, { lockDelay }), lockDelay);
    assert.equal(next.handoff, 'unclean');
    await next.release();
    await holder.release();
    await zk.assertNoNodes(path);
  });

  it("a hold limit's forced release is no clean handoff, not even to the same lock object taking it again with nobody queued since", async () => {
    const path = '/delay/hold-limit';
    const lockDelay = 1000;
    const client = await zk.client();
    await cleanHistory(client, path, lockDelay);
    const mutex = new Mutex(client, path, { lockDelay });
    const hung = await mutex.acquire({ timeout: ROUND_TRIPS_MS, maxHold: 100, forceReleaseAfter: 100 });
    assert.equal(hung.handoff, 'clean');
    // The holder never releases: its own client deletes the node after the hold limit and the grace.
    await eventually(async () => (await zk.children(path)).length === 0, ROUND_TRIPS_MS, 'the forced release');
    const next = await acquireDelayed(mutex, lockDelay);
    assert.equal(next.handoff, 'unclean');
    await next.release();
    await hung.release();
    await zk.assertNoNodes(path);
  });

  it('a lockDelay that is not a whole number of ms from 0 to 2^31-1 is refused with INVALID_ARGUMENT naming the path', async () => {
    const client = await zk.client();
    // A fraction too: its release record would read as unmarked, and no handoff after it be clean.
    for (const lockDelay of [-1, 1500.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31, '5' as unknown as number]) {
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
  it("a holder without lockDelay on the path does not launder an unclean handoff: the lockDelay waiter after it is not 'clean'", async () => {
    // The review's case: H (lockDelay) holds; X, G (no lockDelay) and W queue behind; X gives up
    // (G's check then reads the lock path); an operator deletes H's node; G holds at once and
    // releases with a record naming it, which W follows.
    const path = '/delay/launder';
    const lockDelay = 2000;
    const [h, x, g, w] = [await zk.client(), await zk.client(), await zk.client(), await zk.client()];
    await cleanHistory(h, path, lockDelay);
    const holder = await new Mutex(h, path, { lockDelay }).acquire({ timeout: ROUND_TRIPS_MS });
    assert.equal(holder.handoff, 'clean');
    const aborter = new AbortController();
    const giving = new Mutex(x, path, { lockDelay }).acquire({ signal: aborter.signal });
    await watching(x, holder.node);
    const without = waitFor(new Mutex(g, path), WAITER_TIMEOUT_MS);
    await eventually(async () => (await zk.children(path)).length === 3, ROUND_TRIPS_MS, 'G queued');
    const [, xNode, gNode] = sortContenders(await zk.children(path)).map((c) => `${path}/${c.name}`);
    await watching(g, xNode!);
    const waiting = waitFor(new Mutex(w, path, { lockDelay }), WAITER_TIMEOUT_MS);
    await eventually(async () => (await zk.children(path)).length === 4, ROUND_TRIPS_MS, 'W queued');
    await watching(w, gNode!);
    aborter.abort();
    await assert.rejects(giving, isLockError('ABORTED'));
    await watching(g, holder.node);
    const deleting = performance.now();
    await zk.admin.delete(holder.node);
    const unprotected = await within(without, ROUND_TRIPS_MS, 'G, without lockDelay, holds at once');
    await unprotected.lease.release();
    const next = await within(waiting, lockDelay + ROUND_TRIPS_MS, 'W holds after the delay');
    assert.notEqual(next.lease.handoff, 'clean');
    assert.ok(next.at >= deleting + lockDelay, `resolved ${(next.at - deleting).toFixed(0)} ms after the forced delete (lockDelay ${lockDelay})`);
    await next.lease.release();
    await holder.release();
    await zk.assertNoNodes(path);
  });

  it("a record left by a holder with a shorter lockDelay does not vouch for a longer one: 'unknown', delayed", async () => {
    const path = '/delay/shorter';
    const client = await zk.client();
    await cleanHistory(client, path, 1);
    const longer = await acquireDelayed(new Mutex(client, path, { lockDelay: 1000 }), 1000);
    assert.equal(longer.handoff, 'unknown');
    await longer.release();
    // Its record, marked 1000, vouches for a delay up to that.
    const shorter = await new Mutex(client, path, { lockDelay: 500 }).acquire({ timeout: ROUND_TRIPS_MS });
    assert.deepEqual([shorter.handoff, shorter.lockDelayed], ['clean', 0]);
    await shorter.release();
  });

  it("the same lock object again after someone else deleted its node and it released the lost lease: 'unclean', delayed", async () => {
    const path = '/delay/same-object';
    const lockDelay = 1000;
    const client = await zk.client();
    await cleanHistory(client, path, lockDelay);
    const mutex = new Mutex(client, path, { lockDelay });
    const first = await mutex.acquire({ timeout: ROUND_TRIPS_MS });
    await first.release();
    const lost = await mutex.acquire({ timeout: ROUND_TRIPS_MS });
    assert.equal(lost.handoff, 'clean', 'its own last hold, nobody queued since');
    await zk.admin.delete(lost.node);
    await eventually(() => lost.signal.aborted, ROUND_TRIPS_MS, 'the lease hears of its loss');
    await lost.release();
    const next = await acquireDelayed(mutex, lockDelay);
    assert.equal(next.handoff, 'unclean');
    await next.release();
    await zk.assertNoNodes(path);
  });

  for (const op of ['acquire', 'tryAcquire'] as const) {
    it(`closing the client during the delay rejects ${op} with CLOSED (op '${op}') then, not when the delay ends`, async () => {
      const path = `/delay/close-${op}`;
      const client = await zk.client();
      // Neither timeout nor signal: only the close can end this wait before the delay does.
      const acquiring = new Mutex(client, path, { lockDelay: 60_000 })[op]();
      await eventually(async () => (await zk.children(path)).length === 1, ROUND_TRIPS_MS, 'our node created');
      await watching(client, `${path}/${(await zk.children(path))[0]!}`);
      const rejected = assert.rejects(acquiring, (error) => error instanceof ZooKeeperError && error.code === 'CLOSED' && error.op === op);
      await client.close();
      await within(rejected, ROUND_TRIPS_MS, 'the acquire rejects once the client closes');
      await zk.assertNoNodes(path);
    });
  }

  it('closing the client during the delay rejects with CLOSED then, even when the watch on our node could not be set', async () => {
    const path = '/delay/close-unwatched';
    // Every exists from the moment we ask for the lock is answered with an error (SYSTEMERROR): the
    // delay's watch on our node is then never set, and cannot report the close.
    let refusing = false;
    let refused = 0;
    const proxy = await FaultProxy.start({
      targetPort: zk.server.port,
      onRequest: ({ opcode }) => (refusing && opcode === EXISTS ? (refused++, { error: SYSTEMERROR }) : 'forward'),
    });
    try {
      const client = await ZooKeeperClient.connect(proxy.connectString, { sessionTimeout: 10_000 });
      refusing = true;
      const acquiring = new Mutex(client, path, { lockDelay: 60_000 }).acquire();
      await eventually(async () => (await zk.children(path)).length === 1 && refused > 0, ROUND_TRIPS_MS, 'our node created and its watch refused');
      const rejected = assert.rejects(acquiring, (error) => error instanceof ZooKeeperError && error.code === 'CLOSED');
      await client.close();
      await within(rejected, ROUND_TRIPS_MS, 'the acquire rejects once the client closes');
      await zk.assertNoNodes(path);
    } finally {
      await proxy.close();
    }
  });

  it('our node deleted by someone else during the delay: we queue again then, not when the delay ends', async () => {
    const path = '/delay/requeue';
    const client = await zk.client();
    const aborter = new AbortController();
    const acquiring = new Mutex(client, path, { lockDelay: 60_000 }).acquire({ signal: aborter.signal });
    await eventually(async () => (await zk.children(path)).length === 1, ROUND_TRIPS_MS, 'our node created');
    const [first] = await zk.children(path);
    await watching(client, `${path}/${first!}`);
    await zk.admin.delete(`${path}/${first!}`);
    await eventually(
      async () => {
        const now = await zk.children(path);
        return now.length === 1 && now[0] !== first;
      },
      ROUND_TRIPS_MS,
      'queued again with a new node',
    );
    aborter.abort();
    await assert.rejects(acquiring, isLockError('ABORTED'));
    await zk.assertNoNodes(path);
  });

  it('a lock path created with a release record already in its data (restored, copied) is no clean history', async () => {
    const path = '/delay/restored';
    await zk.admin.ensurePath('/delay');
    await zk.admin.create(path, 'zklock:released:_c_0-lock-0000000000 lockDelay=60000');
    const lease = await acquireDelayed(new Mutex(await zk.client(), path, { lockDelay: 500 }), 500);
    assert.notEqual(lease.handoff, 'clean');
    await lease.release();
  });

  it("a newcomer's decision (joinedHandoff, on Stats from the server): a create and delete between the read and our create, or the path made again, is not clean", async () => {
    // Unit level: the race needs another client's create and delete between two requests of one
    // pipelined round trip, so the requests are sent one by one here and the decision given what they read.
    const path = '/delay/decision';
    const [client, other] = [await zk.client(), await zk.client()];
    const ours = async (): Promise<{ seq: number; listed: Stat }> => {
      const created = await client.create(`${path}/_c_ours-lock-`, '', { mode: 'EPHEMERAL_SEQUENTIAL' });
      const { stat: listed } = await client.getChildren(path);
      await client.delete(created.path);
      return { seq: Number(created.path.slice(-10)), listed };
    };
    await cleanHistory(client, path, 1);
    let before = await client.getData(path);
    let joined = await ours();
    assert.equal(joinedHandoff(before, joined.listed, joined.seq, 1), 'clean', 'nothing in between');

    await cleanHistory(client, path, 1);
    before = await client.getData(path);
    await other.delete((await other.create(`${path}/_c_other-lock-`, '', { mode: 'EPHEMERAL_SEQUENTIAL' })).path);
    joined = await ours();
    assert.equal(joinedHandoff(before, joined.listed, joined.seq, 1), 'unclean', 'someone came and went: the count of creates tells');

    await cleanHistory(client, path, 1);
    before = await client.getData(path);
    // The path made again, with as many creates as it had: only its czxid tells.
    await other.delete(path);
    await other.create(path, before.data);
    for (let i = 0; i < before.stat.cversion >>> 1; i++) await other.delete((await other.create(`${path}/x-`, '', { mode: 'EPHEMERAL_SEQUENTIAL' })).path);
    joined = await ours();
    assert.equal(joined.seq, before.stat.cversion >>> 1, 'the sequence matches the old count');
    assert.equal(joinedHandoff(before, joined.listed, joined.seq, 1), 'unclean', 'another lock path');
  });
});
