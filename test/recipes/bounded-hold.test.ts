import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { performance } from 'node:perf_hooks';
import type { HoldLimit, Lease, MultiLease } from '../../src/index.js';
import { LockError, LockLostError, MultiLock, Mutex, NonReentrantMutex, Perms, ReadWriteLock, Semaphore, SimpleLock } from '../../src/index.js';
import { ROUND_TRIPS_MS, WAITER_TIMEOUT_MS } from '../support/bounds.js';
import { watchTimers } from '../support/live-timers.js';
import { eventually } from '../support/wait.js';
import { RecipeFixture, isLockError, sleep, within } from './fixtures.js';

/** Short enough for a test, long enough that a wrong clock (one started at the create, say) shows. */
const MAX_HOLD = 300;
const GRACE = 200;

/** When `signal` aborted (performance.now()) and why; bounded by the hold and a few round trips. */
async function whenAborted(signal: AbortSignal, ms = MAX_HOLD + GRACE + ROUND_TRIPS_MS): Promise<{ at: number; reason: unknown }> {
  const aborted = signal.aborted ? Promise.resolve() : new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  await within(aborted, ms, 'the lease signal aborted');
  return { at: performance.now(), reason: signal.reason };
}

function assertHoldExpired(reason: unknown, maxHold: number): void {
  assert.ok(reason instanceof LockLostError, `a LockLostError, got ${String(reason)}`);
  assert.equal(reason.code, 'HOLD_EXPIRED');
  assert.match(reason.message, new RegExp(`maxHold of ${maxHold} ms`));
}

/** The hold's clock started as the lease was handed out: between the acquire's call (t0) and its return (t1). */
function assertClockStarted(limit: HoldLimit | undefined, t0: number, t1: number, maxHold: number): HoldLimit {
  assert.ok(limit, 'the lease has a hold limit');
  assert.equal(limit.maxHold, maxHold);
  assert.ok(limit.expiresAt >= t0 + maxHold && limit.expiresAt <= t1 + maxHold, 'the clock started when the lease was handed out');
  return limit;
}

describe('bounded holds (maxHold, forceReleaseAfter)', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  it('Mutex: the signal aborts with HOLD_EXPIRED at maxHold, not before; then the lease is not held, guard() is refused, and the node stays until release() deletes it', async () => {
    const path = '/bh/mutex';
    const [client, other] = await Promise.all([zk.client(), zk.client()]);
    const mutex = new Mutex(client, path);
    const t0 = performance.now();
    const lease = await mutex.acquire({ maxHold: MAX_HOLD });
    const limit = assertClockStarted(lease.holdLimit, t0, performance.now(), MAX_HOLD);
    assert.equal(limit.forceReleaseAfter, undefined);
    assert.ok(lease.held);

    const { at, reason } = await whenAborted(lease.signal);
    assert.ok(at >= limit.expiresAt, `aborted ${limit.expiresAt - at} ms before its bound`);
    assertHoldExpired(reason, MAX_HOLD);
    assert.equal(lease.held, false);
    assert.equal(mutex.isAcquiredInThisProcess(), false, 'an expired hold no longer counts');
    await assert.rejects(lease.guard([{ op: 'setData', path, data: Buffer.from('x') }]), isLockError('NOT_HELD'));
    assert.notEqual((await zk.admin.getData(path)).data.toString(), 'x', 'the refused guard wrote nothing');

    // The holder overran its bound, but its node is still there: the lock is still taken.
    assert.ok(await other.exists(lease.node), 'the node stays until released');
    assert.equal(await new Mutex(other, path).tryAcquire(), null, 'nobody else gets the lock meanwhile');

    await lease.release();
    assert.equal(await other.exists(lease.node), null, 'release() after the expiry deleted the node');
    await assert.rejects(lease.release(), isLockError('ALREADY_RELEASED'));
    const next = await new Mutex(other, path).acquire({ timeout: WAITER_TIMEOUT_MS });
    await next.release();
    await zk.assertNoNodes(path);
  });

  /**
   * A holder that would write a release record: more than the lookahead's 16 contenders were
   * queued ahead of it, so it read the lock path when it was woken (see release-record.ts).
   * Returns its acquire (started), the mutex of the contenders ahead (to hand the lock down), and
   * a waiter queued behind it on another client.
   */
  async function holderThatRecords(path: string, hold: { maxHold: number; forceReleaseAfter?: number }): Promise<{ holder: Promise<Lease>; holderNode: string; start: () => Promise<void>; waiter: Promise<Lease> }> {
    const [first, aheadClient, holderClient, waiterClient] = await Promise.all([zk.client(), zk.client(), zk.client(), zk.client()]);
    const firstLease = await new Mutex(first, path).acquire();
    const ahead = Array.from({ length: 17 }, async () => (await new Mutex(aheadClient, path).acquire({ timeout: WAITER_TIMEOUT_MS })).release());
    await eventually(async () => (await zk.children(path)).length === 18, ROUND_TRIPS_MS, 'the contenders ahead queued');
    const holder = new Mutex(holderClient, path).acquire({ timeout: WAITER_TIMEOUT_MS, ...hold });
    await eventually(async () => (await zk.children(path)).length === 19, ROUND_TRIPS_MS, 'the holder queued');
    // The newest contender: the highest sequence number (the suffix's ten digits).
    const holderNode = `${path}/${(await zk.children(path)).sort((a, b) => a.slice(-10).localeCompare(b.slice(-10))).at(-1)!}`;
    const waiter = new Mutex(waiterClient, path).acquire({ timeout: WAITER_TIMEOUT_MS });
    await eventually(async () => (await zk.children(path)).length === 20, ROUND_TRIPS_MS, 'the waiter queued');
    const start = async (): Promise<void> => {
      await firstLease.release();
      await Promise.all(ahead);
    };
    return { holder, holderNode, start, waiter };
  }

  it('Mutex with forceReleaseAfter: the holder\'s own client deletes its node that much after the expiry, without a release record, and the next waiter gets the lock', async () => {
    const path = '/bh/forced';
    const { holder, holderNode, start, waiter } = await holderThatRecords(path, { maxHold: MAX_HOLD, forceReleaseAfter: GRACE });
    // Watched by another session, set before the holder gets the lock (its grace may be over in
    // less than a round trip on a busy machine): when the node really went.
    let deletedAt = 0;
    const watched = await zk.admin.exists(holderNode, { watch: (event) => event.type === 'deleted' && (deletedAt = performance.now()) });
    assert.ok(watched, 'the holder\'s node is there');
    await start();
    const lease = await within(holder, ROUND_TRIPS_MS, 'the holder acquired');
    assert.equal(lease.node, holderNode);
    const limit = lease.holdLimit!;
    assert.equal(limit.forceReleaseAfter, GRACE);
    const { reason } = await whenAborted(lease.signal);
    assertHoldExpired(reason, MAX_HOLD);

    const next = await within(waiter, ROUND_TRIPS_MS + MAX_HOLD + GRACE, 'the waiter got the lock once the hung holder\'s node was deleted');
    assert.ok(deletedAt >= limit.expiresAt + GRACE, `deleted ${limit.expiresAt + GRACE - deletedAt} ms before the grace was over`);
    assert.equal(await zk.admin.exists(lease.node), null);
    const name = lease.node.slice(path.length + 1);
    const { data } = await zk.admin.getData(path);
    assert.notEqual(data.toString(), `zklock:released:${name}`, 'the forced delete wrote no release record');
    assert.match(data.toString(), /^zklock:released:/, 'the record is the last clean release\'s, from a contender ahead');

    // Release after the forced delete: quiet, and it touches nothing (the next holder's node stays).
    await lease.release();
    assert.ok(await zk.admin.exists(next.node), 'the next holder\'s node is untouched');
    assert.equal((await zk.admin.getData(path)).data.toString(), data.toString(), 'nor was a record written by that release');
    await assert.rejects(lease.release(), isLockError('ALREADY_RELEASED'));
    await next.release();
    await zk.assertNoNodes(path);
  });

  it('a release after the expiry is a clean release: the same holder then writes its release record', async () => {
    const path = '/bh/clean-after-expiry';
    const { holder, start, waiter } = await holderThatRecords(path, { maxHold: MAX_HOLD });
    await start();
    const lease = await within(holder, ROUND_TRIPS_MS, 'the holder acquired');
    assertHoldExpired((await whenAborted(lease.signal)).reason, MAX_HOLD);
    await lease.release();
    assert.equal((await zk.admin.getData(path)).data.toString(), `zklock:released:${lease.node.slice(path.length + 1)}`);
    await (await within(waiter, ROUND_TRIPS_MS, 'the waiter got the lock')).release();
    await zk.assertNoNodes(path);
  });

  it('a lease released, lost or handed over before its bound never expires: its timers are gone, and none of them kept the process alive', async () => {
    const path = '/bh/timers';
    const client = await zk.client();
    // Delays no other timer of this process has.
    const maxHold = 987_654;
    const grace = 876_543;
    const timers = watchTimers();
    try {
      const released = await new Mutex(client, path).acquire({ maxHold, forceReleaseAfter: grace });
      assert.deepEqual(timers.live(maxHold, maxHold - 1000).map((timer) => timer.ref), [false], 'one timer for the bound, unref\'d');
      await released.release();
      assert.deepEqual(timers.live(maxHold, maxHold - 1000), [], 'cleared on release');
      assert.equal((released.signal.reason as LockLostError).code, 'RELEASED');

      const lost = await new Mutex(client, path).acquire({ maxHold, forceReleaseAfter: grace });
      void lost.signal;
      await zk.admin.delete(lost.node);
      assert.equal(((await whenAborted(lost.signal)).reason as LockLostError).code, 'NODE_DELETED');
      assert.deepEqual(timers.live(maxHold, maxHold - 1000), [], 'cleared on loss');

      // Expired: the forced release's timer is next, unref'd too, and a release clears it.
      const expired = await new Mutex(client, path).acquire({ maxHold: MAX_HOLD, forceReleaseAfter: grace });
      assertHoldExpired((await whenAborted(expired.signal)).reason, MAX_HOLD);
      const forcing = timers.live(grace, grace - 1000);
      assert.equal(forcing.length, 1, 'the forced release is due');
      assert.equal(forcing[0]!.ref, false, 'and does not keep the process alive');
      await expired.release();
      assert.deepEqual(timers.live(grace, grace - 1000), [], 'cleared on release');

      const rw = new ReadWriteLock(client, `${path}-rw`);
      const writing = await rw.writeLock.acquire({ maxHold, forceReleaseAfter: grace });
      const reading = await rw.downgrade(writing);
      assert.equal(timers.live(maxHold, maxHold - 1000).length, 1, 'the write lease\'s timer went with the handover; the read lease has its own');
      await reading.release();
      assert.deepEqual(timers.live(maxHold, maxHold - 1000), []);

      // Short bounds, released in time: nothing happens when they would have passed.
      const early = await new Mutex(client, path).acquire({ maxHold: MAX_HOLD, forceReleaseAfter: GRACE });
      await early.release();
      await sleep(MAX_HOLD + GRACE + 100);
      assert.equal((early.signal.reason as LockLostError).code, 'RELEASED', 'no HOLD_EXPIRED after the release');
    } finally {
      timers.stop();
    }
    await zk.assertNoNodes(path);
  });

  it('ReadWriteLock: a downgrade carries the hold bound over (it does not restart)', async () => {
    const path = '/bh/downgrade';
    const client = await zk.client();
    const rw = new ReadWriteLock(client, path);
    // Long enough that the downgrade's round trips end well within it, however busy the machine.
    const writing = await rw.writeLock.acquire({ maxHold: 10 * 60_000, forceReleaseAfter: GRACE });
    const reading = await rw.downgrade(writing);
    assert.equal((writing.signal.reason as LockLostError).code, 'RELEASED', 'the write lease was handed over, not expired');
    assert.deepEqual(reading.holdLimit, writing.holdLimit, 'the same bound');
    assert.ok(reading.held);
    await reading.release();
    await zk.assertNoNodes(path);
  });

  it('ReadWriteLock: a downgraded read lease expires and is force-released on time', async () => {
    const path = '/bh/downgrade-expiry';
    const [client, other] = await Promise.all([zk.client(), zk.client()]);
    const rw = new ReadWriteLock(client, path);
    const maxHold = 2000;
    const writing = await rw.writeLock.acquire({ maxHold, forceReleaseAfter: GRACE });
    const reading = await rw.downgrade(writing);
    const { at, reason } = await whenAborted(reading.signal, maxHold + GRACE + ROUND_TRIPS_MS);
    assert.ok(at >= writing.holdLimit!.expiresAt);
    assertHoldExpired(reason, maxHold);
    const writer = await new ReadWriteLock(other, path).writeLock.acquire({ timeout: ROUND_TRIPS_MS + GRACE });
    assert.equal(await other.exists(reading.node), null, 'the read lease\'s node was deleted by its own client');
    await reading.release();
    await writer.release();
    await zk.assertNoNodes(path);
  });

  it('ReadWriteLock: a hold that expires during the downgrade\'s round trips gets no read lease (NOT_HELD)', async () => {
    const path = '/bh/downgrade-late';
    const client = await zk.client();
    const rw = new ReadWriteLock(client, path);
    const writing = await rw.writeLock.acquire({ maxHold: MAX_HOLD, forceReleaseAfter: 10 * 60_000 });
    assert.ok(writing.held);
    const downgrading = rw.downgrade(writing);
    // The downgrade's first request is out; the event loop stalls past the bound meanwhile.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Math.max(0, writing.holdLimit!.expiresAt - performance.now()) + 50);
    await assert.rejects(downgrading, isLockError('NOT_HELD'));
    assertHoldExpired(writing.signal.reason, MAX_HOLD);
    await writing.release();
    await zk.assertNoNodes(path);
  });

  it('Semaphore with leases: k: one bound for the whole set; the combined signal says HOLD_EXPIRED and every lease node is force-released', async () => {
    const path = '/bh/semaphore';
    const [client, other] = await Promise.all([zk.client(), zk.client()]);
    const t0 = performance.now();
    const multi: MultiLease = await new Semaphore(client, path, 3).acquire({ leases: 2, maxHold: MAX_HOLD, forceReleaseAfter: GRACE });
    const limit = assertClockStarted(multi.holdLimit, t0, performance.now(), MAX_HOLD);
    for (const lease of multi.leases) assert.equal(lease.holdLimit, limit, 'every lease has the set\'s bound');
    const { at, reason } = await whenAborted(multi.signal);
    assert.ok(at >= limit.expiresAt);
    assertHoldExpired(reason, MAX_HOLD);
    assert.equal(multi.held, false);
    // All three slots: only once both forced releases went.
    const all = await new Semaphore(other, path, 3).acquire({ leases: 3, timeout: ROUND_TRIPS_MS + MAX_HOLD + GRACE });
    for (const lease of multi.leases) assert.equal(await other.exists(lease.node), null);
    await multi.release();
    await all.release();
    await zk.assertNoNodes(`${path}/leases`);

    // One lease, and tryAcquire, take the bound too.
    const one = await new Semaphore(client, path, 3).tryAcquire({ maxHold: MAX_HOLD });
    assert.ok(one);
    assertHoldExpired((await whenAborted(one.signal)).reason, MAX_HOLD);
    assert.ok(await other.exists(one.node), 'without forceReleaseAfter the node stays');
    await one.release();
    await zk.assertNoNodes(`${path}/leases`);
  });

  it('SimpleLock: expiry, then the forced release of its reusable name (czxid-checked) lets another client in', async () => {
    const path = '/bh/simple';
    const [client, other] = await Promise.all([zk.client(), zk.client()]);
    const lease = await new SimpleLock(client, path).tryAcquire({ maxHold: MAX_HOLD, forceReleaseAfter: GRACE });
    assert.ok(lease);
    assertHoldExpired((await whenAborted(lease.signal)).reason, MAX_HOLD);
    const next = await new SimpleLock(other, path).acquire({ timeout: ROUND_TRIPS_MS + MAX_HOLD + GRACE });
    assert.notEqual(next.fencingToken, lease.fencingToken);
    // The namesake is another's: the expired lease's release leaves it alone.
    await lease.release();
    const stat = await zk.admin.exists(path);
    assert.equal(stat?.czxid, next.fencingToken, 'the next holder\'s node is untouched');
    await next.release();
    assert.equal(await zk.admin.exists(path), null);
  });

  it('MultiLock: the clock starts when the whole set is handed out; the combined signal says HOLD_EXPIRED; release deletes every node', async () => {
    const [client, other] = await Promise.all([zk.client(), zk.client()]);
    const multi = new MultiLock([new Mutex(client, '/bh/multi/a'), new NonReentrantMutex(client, '/bh/multi/b')]);
    const t0 = performance.now();
    const lease = await multi.acquire({ maxHold: MAX_HOLD, timeout: WAITER_TIMEOUT_MS });
    const limit = assertClockStarted(lease.holdLimit, t0, performance.now(), MAX_HOLD);
    const { at, reason } = await whenAborted(lease.signal);
    assert.ok(at >= limit.expiresAt);
    assertHoldExpired(reason, MAX_HOLD);
    assert.equal(lease.held, false);
    for (const one of lease.leases) assert.ok(await other.exists(one.node), 'the nodes stay until released');
    await lease.release();
    for (const one of lease.leases) assert.equal(await other.exists(one.node), null);

    const tried = await multi.tryAcquire({ maxHold: MAX_HOLD, forceReleaseAfter: GRACE });
    assert.ok(tried);
    assertHoldExpired((await whenAborted(tried.signal)).reason, MAX_HOLD);
    await eventually(async () => (await Promise.all(tried.leases.map((one) => other.exists(one.node)))).every((stat) => stat === null), ROUND_TRIPS_MS, 'both nodes force-released');
    await tried.release();
    await zk.assertNoNodes('/bh/multi/a');
    await zk.assertNoNodes('/bh/multi/b');
  });

  it('runExclusive: nested re-entry keeps the outermost bound; once it expired, re-entering fails with LOCK_LOST (HOLD_EXPIRED as cause)', async () => {
    const client = await zk.client();
    const mutex = new Mutex(client, '/bh/reentrant');
    await mutex.runExclusive(
      async (outer) => {
        const limit = outer.holdLimit;
        await mutex.runExclusive((inner) => assert.equal(inner.holdLimit, limit, 'the outermost bound'), { maxHold: 10 * 60_000 });
        assertHoldExpired((await whenAborted(outer.signal)).reason, MAX_HOLD);
        await assert.rejects(
          mutex.runExclusive(() => undefined),
          (error: unknown) => error instanceof LockError && error.code === 'LOCK_LOST' && error.cause instanceof LockLostError && error.cause.code === 'HOLD_EXPIRED',
        );
      },
      { maxHold: MAX_HOLD },
    );
    await zk.assertNoNodes('/bh/reentrant');
  });

  it('a release made from inside the abort listener leaves no forced release behind (a Lease, and a MultiLease through its combined signal)', async () => {
    const path = '/bh/release-in-listener';
    const { client, proxy } = await zk.viaProxy({ sessionTimeout: 10_000 });
    // A grace no other timer of this process has: an armed forced release would show.
    const grace = 765_432;
    const timers = watchTimers();
    try {
      for (const acquire of [
        () => new Mutex(client, path).acquire({ maxHold: MAX_HOLD, forceReleaseAfter: grace }),
        () => new Semaphore(client, `${path}-sem`, 3).acquire({ leases: 2, maxHold: MAX_HOLD, forceReleaseAfter: grace }),
      ]) {
        const lease = await acquire();
        let releasing: Promise<void> | undefined;
        lease.signal.addEventListener('abort', () => {
          releasing = lease.release();
        }, { once: true });
        assertHoldExpired((await whenAborted(lease.signal)).reason, MAX_HOLD);
        await releasing;
        assert.deepEqual(timers.live(grace, grace - 1000), [], 'no forced release armed after the release');
      }

      // With a short grace: no second delete reaches the server once it is over.
      const lease = await new Mutex(client, path).acquire({ maxHold: MAX_HOLD, forceReleaseAfter: GRACE });
      let releasing: Promise<void> | undefined;
      lease.signal.addEventListener('abort', () => {
        releasing = lease.release();
      }, { once: true });
      await whenAborted(lease.signal);
      await releasing;
      let sent = 0;
      const unsubscribe = proxy.onChunk((event) => event.direction === 'upstream' && event.chunk.includes(lease.node) && sent++);
      await sleep(Math.max(0, lease.holdLimit!.expiresAt + GRACE - performance.now()) + 100);
      // A round trip behind anything the client sent meanwhile.
      await client.exists('/');
      unsubscribe();
      assert.equal(sent, 0, 'nothing about the released node was sent');
    } finally {
      timers.stop();
    }
    await zk.assertNoNodes(path);
    await zk.assertNoNodes(`${path}-sem/leases`);
  });

  it('after SESSION_MAY_HAVE_EXPIRED (a stall shorter than the session timeout), the forced release still comes at the end of the grace', async () => {
    const path = '/bh/proof-lapsed';
    const client = await zk.client({ sessionTimeout: 10_000 });
    // The proof of liveness lasts only 1 s past each heartbeat: a 1.5 s stall runs it out, the session lives on.
    const maxHold = 4000;
    const lease = await new Mutex(client, path, { safetyMargin: 9000 }).acquire({ maxHold, forceReleaseAfter: GRACE });
    let deletedAt = 0;
    assert.ok(await zk.admin.exists(lease.node, { watch: (event) => event.type === 'deleted' && (deletedAt = performance.now()) }));
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1500);
    assert.equal((lease.signal.reason as LockLostError).code, 'SESSION_MAY_HAVE_EXPIRED');
    await eventually(() => client.state === 'connected', ROUND_TRIPS_MS, 'connected again');
    await eventually(() => deletedAt > 0, maxHold + GRACE + ROUND_TRIPS_MS, 'the forced release deleted the node');
    assert.ok(deletedAt >= lease.holdLimit!.expiresAt + GRACE, `deleted ${lease.holdLimit!.expiresAt + GRACE - deletedAt} ms before the grace was over`);
    assert.equal(client.sessionId, lease.sessionId, 'the same session: only the forced release could delete the node');
    await lease.release();
    await zk.assertNoNodes(path);
  });

  it('a forced release the server refuses (NOAUTH) leaves the node; release() then sends its own delete and reports why', async () => {
    const path = '/bh/force-refused';
    const client = await zk.client();
    const lease = await new Mutex(client, path).acquire({ maxHold: MAX_HOLD, forceReleaseAfter: GRACE });
    await zk.admin.setACL(path, [{ perms: Perms.ALL & ~Perms.DELETE, id: { scheme: 'world', id: 'anyone' } }]);
    try {
      assertHoldExpired((await whenAborted(lease.signal)).reason, MAX_HOLD);
      await sleep(Math.max(0, lease.holdLimit!.expiresAt + GRACE - performance.now()) + 100);
      // A round trip behind the forced delete: its answer is in by then.
      await client.exists('/');
      assert.ok(await zk.admin.exists(lease.node), 'the refused forced release left the node');
      await assert.rejects(lease.release(), (error: unknown) => (error as { code?: string }).code === 'NOAUTH');
    } finally {
      await zk.admin.setACL(path, [{ perms: Perms.ALL, id: { scheme: 'world', id: 'anyone' } }]);
    }
    await zk.admin.delete(lease.node);
    await zk.assertNoNodes(path);
  });

  it('the hold bound cannot be set from outside: the locks set it, from checked options', async () => {
    const client = await zk.client();
    const lease = await new Mutex(client, '/bh/internal').acquire();
    const multi = await new Semaphore(client, '/bh/internal-sem', 2).acquire({ leases: 2 });
    for (const one of [lease, multi]) assert.equal('limitHold' in one, false, 'no limitHold method on the public type');
    await lease.release();
    await multi.release();
    await zk.assertNoNodes('/bh/internal');
    await zk.assertNoNodes('/bh/internal-sem/leases');
  });

  it('a maxHold or timeout beyond a timer\'s 2^31-1 ms does not fire early', async () => {
    const path = '/bh/long';
    const [client, other] = await Promise.all([zk.client(), zk.client()]);
    const long = 2 ** 31 + 1000;
    const lease = await new Mutex(client, path).acquire({ maxHold: long, forceReleaseAfter: long });
    // A waiter whose timeout is longer than a timer can hold.
    const waiting = new Mutex(other, path).acquire({ timeout: long });
    await eventually(async () => (await zk.children(path)).length === 2, ROUND_TRIPS_MS, 'the waiter queued');
    await sleep(200);
    assert.ok(lease.held, 'the hold has not expired');
    assert.equal(lease.signal.aborted, false);
    assert.equal(await client.exists(lease.node) !== null, true);
    await lease.release();
    const next = await within(waiting, ROUND_TRIPS_MS, 'the waiter is still waiting, and gets the lock');
    await next.release();
    await zk.assertNoNodes(path);
  });

  it('bad bounds fail with INVALID_ARGUMENT naming the path, before any node is created', async () => {
    const client = await zk.client();
    const bad: { maxHold?: unknown; forceReleaseAfter?: unknown }[] = [{ maxHold: 0 }, { maxHold: -1 }, { maxHold: Number.NaN }, { maxHold: Number.POSITIVE_INFINITY }, { maxHold: '5' }, { maxHold: 100, forceReleaseAfter: 0 }, { forceReleaseAfter: 100 }];
    const path = '/bh/bad';
    const rw = new ReadWriteLock(client, `${path}/rw`);
    const attempts: [string, string, (options: never) => Promise<unknown>][] = [
      ['mutex', `${path}/mutex`, (options) => new Mutex(client, `${path}/mutex`).acquire(options)],
      ['mutex try', `${path}/mutex`, (options) => new Mutex(client, `${path}/mutex`).tryAcquire(options)],
      ['mutex runExclusive', `${path}/mutex`, (options) => new Mutex(client, `${path}/mutex`).runExclusive(() => undefined, options)],
      ['read lock', `${path}/rw`, (options) => rw.readLock.acquire(options)],
      ['write lock', `${path}/rw`, (options) => rw.writeLock.acquire(options)],
      ['semaphore', `${path}/sem`, (options) => new Semaphore(client, `${path}/sem`, 2).acquire(options)],
      ['semaphore k', `${path}/sem`, (options) => new Semaphore(client, `${path}/sem`, 2).acquire({ ...(options as object), leases: 2 })],
      ['semaphore try', `${path}/sem`, (options) => new Semaphore(client, `${path}/sem`, 2).tryAcquire(options)],
      ['simple', `${path}/simple`, (options) => new SimpleLock(client, `${path}/simple`).acquire(options)],
      ['simple try', `${path}/simple`, (options) => new SimpleLock(client, `${path}/simple`).tryAcquire(options)],
      ['multi', `${path}/m1`, (options) => new MultiLock([new Mutex(client, `${path}/m1`), new Mutex(client, `${path}/m2`)]).acquire(options)],
      ['multi try', `${path}/m1`, (options) => new MultiLock([new Mutex(client, `${path}/m1`), new Mutex(client, `${path}/m2`)]).tryAcquire(options)],
    ];
    for (const [what, lockPath, attempt] of attempts) {
      for (const options of bad) {
        await assert.rejects(
          attempt(options as never),
          (error: unknown) => error instanceof LockError && error.code === 'INVALID_ARGUMENT' && error.path === lockPath,
          `${what} ${JSON.stringify(options)}`,
        );
      }
    }
    assert.equal(await zk.admin.exists(path), null, 'nothing was created');
  });
});
