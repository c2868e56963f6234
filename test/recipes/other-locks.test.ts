import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MultiLock, Mutex, ReadWriteLock, Semaphore, SimpleLock, inspectLock } from '../../src/index.js';
import { ROUND_TRIPS_MS, WAITER_TIMEOUT_MS } from '../support/bounds.js';
import { eventually, whileProgressing } from '../support/wait.js';
import { RecipeFixture, isLockError, sleep, track, within } from './fixtures.js';

describe('simple lock, read/write lock, multi-lock, semaphore', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  describe('SimpleLock', () => {
    it('tryAcquire, acquire waiting for a release, and release deleting only our own node', async () => {
      const [a, b] = [await zk.client(), await zk.client()];
      const lockA = new SimpleLock(a, '/s/simple/node', { ownerId: 'a' });
      const lockB = new SimpleLock(b, '/s/simple/node', { ownerId: 'b' });
      const leaseA = await lockA.tryAcquire();
      assert.ok(leaseA);
      assert.equal((JSON.parse((await zk.admin.getData('/s/simple/node')).data.toString()) as { id: string }).id, 'a', 'the node names its owner');
      assert.equal(await lockB.tryAcquire(), null);
      const waiting = track(lockB.acquire({ timeout: WAITER_TIMEOUT_MS }));
      await sleep(200);
      assert.equal(waiting.settled, false, 'B waits while A holds');
      await leaseA.release();
      const leaseB = await within(waiting.promise, ROUND_TRIPS_MS, 'B acquires after the release');
      assert.equal((await zk.admin.exists('/s/simple/node'))?.ephemeralOwner, b.sessionId);

      // A lease whose node an admin removed must not delete the next holder's node of the same name.
      await zk.admin.delete('/s/simple/node');
      const leaseA2 = await lockA.acquire({ timeout: ROUND_TRIPS_MS });
      await leaseB.release();
      assert.equal((await zk.admin.exists('/s/simple/node'))?.ephemeralOwner, a.sessionId, "B's release left A's node alone");
      await leaseA2.release();
      assert.equal(await zk.admin.exists('/s/simple/node'), null);
    });

    it('acquire({ timeout }) rejects with LOCK_TIMEOUT and leaves the holder alone', async () => {
      const [a, b] = [await zk.client(), await zk.client()];
      const lease = await new SimpleLock(a, '/s/simple/timeout').acquire();
      await assert.rejects(new SimpleLock(b, '/s/simple/timeout').acquire({ timeout: 200 }), isLockError('LOCK_TIMEOUT'));
      assert.equal((await zk.admin.exists('/s/simple/timeout'))?.ephemeralOwner, a.sessionId);
      await lease.release();
    });
  });

  describe('ReadWriteLock', () => {
    it('readers share, a writer waits for them, and a reader arriving after a waiting writer waits for that writer', async () => {
      const clients = await Promise.all([zk.client(), zk.client(), zk.client(), zk.client()]);
      const rw = clients.map((c) => new ReadWriteLock(c, '/s/rw/fair'));
      const r1 = await rw[0]!.readLock.acquire({ timeout: ROUND_TRIPS_MS });
      const r2 = await rw[1]!.readLock.acquire({ timeout: ROUND_TRIPS_MS });
      assert.ok(r1.held && r2.held, 'two readers hold at once');
      const writer = track(rw[2]!.writeLock.acquire({ timeout: WAITER_TIMEOUT_MS }));
      await eventually(async () => (await zk.children('/s/rw/fair')).length === 3, ROUND_TRIPS_MS, 'writer queued');
      const lateReader = track(rw[3]!.readLock.acquire({ timeout: WAITER_TIMEOUT_MS }));
      await eventually(async () => (await zk.children('/s/rw/fair')).length === 4, ROUND_TRIPS_MS, 'late reader queued');
      await sleep(200);
      assert.equal(writer.settled, false, 'the writer waits for the readers');
      assert.equal(lateReader.settled, false, 'a reader behind a waiting writer does not jump it');
      await r1.release();
      await sleep(100);
      assert.equal(writer.settled, false, 'the writer waits for every reader');
      await r2.release();
      const w = await within(writer.promise, ROUND_TRIPS_MS, 'writer acquires');
      await sleep(200);
      assert.equal(lateReader.settled, false, 'the late reader waits while the writer holds');
      await w.release();
      const r3 = await within(lateReader.promise, ROUND_TRIPS_MS, 'late reader acquires');
      await r3.release();
      await zk.assertNoNodes('/s/rw/fair');
    });

    it('downgrade: the read lock is held at once, the write lock released, readers join, and a queued writer stays out until the read lock goes', async () => {
      const [a, b, c] = [await zk.client(), await zk.client(), await zk.client()];
      const ours = new ReadWriteLock(a, '/s/rw/downgrade');
      const write = await ours.writeLock.acquire();
      const reader = track(new ReadWriteLock(b, '/s/rw/downgrade').readLock.acquire({ timeout: WAITER_TIMEOUT_MS }));
      await eventually(async () => (await zk.children('/s/rw/downgrade')).length === 2, ROUND_TRIPS_MS, 'reader queued');
      let writerIn = false;
      const otherWriter = track(
        new ReadWriteLock(c, '/s/rw/downgrade').writeLock.acquire({ timeout: WAITER_TIMEOUT_MS }).then((l) => {
          writerIn = true;
          return l;
        }),
      );
      await eventually(async () => (await zk.children('/s/rw/downgrade')).length === 3, ROUND_TRIPS_MS, 'other writer queued');
      const read = await within(ours.downgrade(write), ROUND_TRIPS_MS, 'downgrade');
      assert.equal(write.held, false, 'the write lease is released');
      assert.ok(read.held, 'the read lease is held');
      await assert.rejects(write.release(), isLockError('ALREADY_RELEASED'));
      const theirRead = await within(reader.promise, ROUND_TRIPS_MS, 'the reader queued behind our writer shares the read lock with us');
      const state = await inspectLock(zk.admin, '/s/rw/downgrade');
      assert.deepEqual(
        state.holders.map((h) => h.path),
        [read.node, theirRead.node],
        'inspection: our downgraded node and the reader hold',
      );
      assert.deepEqual(state.waiters.map((w) => w.sessionId), [c.sessionId], 'inspection: the other writer waits');
      await sleep(300);
      assert.equal(writerIn, false, 'no writer got in while we hold the read lock');
      await theirRead.release();
      await sleep(200);
      assert.equal(writerIn, false, 'still out: our downgraded read lock is held');
      await read.release();
      const w = await within(otherWriter.promise, ROUND_TRIPS_MS, 'the other writer gets in after the read lock went');
      await w.release();
      await zk.assertNoNodes('/s/rw/downgrade');
    });

    it('upgrading fails at once with UPGRADE_NOT_SUPPORTED; a read lock inside the write lock is WOULD_DEADLOCK', async () => {
      const rw = new ReadWriteLock(await zk.client(), '/s/rw/upgrade');
      await rw.readLock.runExclusive(async () => {
        // Not a wait for ourselves to leave: that would end in LOCK_TIMEOUT, after creating a write node.
        await assert.rejects(rw.writeLock.acquire({ timeout: ROUND_TRIPS_MS }), isLockError('UPGRADE_NOT_SUPPORTED'));
        assert.equal((await zk.children('/s/rw/upgrade')).length, 1, 'no write node created');
      });
      await rw.writeLock.runExclusive(async () => {
        await assert.rejects(rw.readLock.acquire({ timeout: ROUND_TRIPS_MS }), isLockError('WOULD_DEADLOCK'));
      });
      await zk.assertNoNodes('/s/rw/upgrade');
    });
  });

  describe('MultiLock', () => {
    it('two multi-locks over the same set in opposite orders never deadlock, and never hold at once', async () => {
      const [a, b] = [await zk.client(), await zk.client()];
      const paths = ['/s/multi/x', '/s/multi/y', '/s/multi/z'];
      const forward = new MultiLock(paths.map((p) => new Mutex(a, p)));
      const backward = new MultiLock([...paths].reverse().map((p) => new Mutex(b, p)));
      let holders = 0;
      let rounds = 0;
      const run = async (multi: MultiLock): Promise<void> => {
        for (let i = 0; i < 25; i++) {
          await multi.runExclusive(async (lease) => {
            holders++;
            assert.equal(holders, 1, 'the two multi-locks held at once');
            assert.deepEqual(lease.leases.map((l) => l.lockPath), paths, 'taken in sorted path order');
            await sleep(Math.random() * 3);
            holders--;
            rounds++;
          });
        }
      };
      // A deadlock stops the rounds: bounded per round, so a slow machine only makes it take longer.
      await whileProgressing(Promise.all([run(forward), run(backward)]), () => rounds, 'no deadlock');
      assert.equal(rounds, 50);
      for (const p of paths) await zk.assertNoNodes(p);
    });

    it('a timeout releases the locks already taken', async () => {
      const [a, b] = [await zk.client(), await zk.client()];
      const blocker = await new Mutex(b, '/s/multi-t/b').acquire();
      const multi = new MultiLock([new Mutex(a, '/s/multi-t/b'), new Mutex(a, '/s/multi-t/a')]);
      await assert.rejects(multi.acquire({ timeout: 300 }), isLockError('LOCK_TIMEOUT'));
      await zk.assertNoNodes('/s/multi-t/a', 'the lock taken before the timeout was released');
      assert.equal((await zk.children('/s/multi-t/b')).length, 1, 'only the blocker node is left');
      assert.equal(await multi.tryAcquire(), null);
      await zk.assertNoNodes('/s/multi-t/a', 'tryAcquire released what it took');
      await blocker.release();
      const all = await multi.tryAcquire();
      assert.ok(all?.held);
      await all.release();
      await zk.assertNoNodes('/s/multi-t/a');
      await zk.assertNoNodes('/s/multi-t/b');
    });
  });

  describe('Semaphore', () => {
    it('never more than N holders under churn, and N are reached', async () => {
      const clients = await Promise.all(Array.from({ length: 6 }, () => zk.client()));
      let current = 0;
      let peak = 0;
      let acquisitions = 0;
      // A fixed amount of churn, not a fixed time: a slow machine must not make it thinner.
      const rounds = 10;
      await whileProgressing(
        Promise.all(
          clients.map(async (client) => {
            const semaphore = new Semaphore(client, '/s/sem/churn', 3);
            for (let round = 0; round < rounds; round++) {
              await semaphore.runExclusive(
                async () => {
                  current++;
                  peak = Math.max(peak, current);
                  assert.ok(current <= 3, `${current} holders of a semaphore of 3`);
                  // The first holders stay until three hold at once, however slowly the others arrive.
                  if (peak < 3) await eventually(() => peak === 3, ROUND_TRIPS_MS, 'three holders at once');
                  await sleep(5 + Math.random() * 10);
                  current--;
                  acquisitions++;
                },
                { timeout: WAITER_TIMEOUT_MS },
              );
            }
          }),
        ),
        () => acquisitions,
        'churn',
      );
      assert.equal(peak, 3, 'the semaphore let 3 in at once');
      assert.equal(acquisitions, rounds * clients.length);
      await zk.assertNoNodes('/s/sem/churn/leases');
      await zk.assertNoNodes('/s/sem/churn/locks');
    });

    it('a waiter is woken when any holder leaves, not only the first; tryAcquire is null when full; 0 leases is INVALID_ARGUMENT', async () => {
      const clients = await Promise.all([zk.client(), zk.client(), zk.client()]);
      const sems = clients.map((c) => new Semaphore(c, '/s/sem/any', 2));
      const first = await sems[0]!.acquire();
      const second = await sems[1]!.acquire();
      assert.equal(await sems[2]!.tryAcquire(), null);
      assert.equal((await zk.children('/s/sem/any/leases')).length, 2, 'tryAcquire left no lease node');
      await zk.assertNoNodes('/s/sem/any/locks', 'tryAcquire left no queue node');
      const waiting = track(sems[2]!.acquire({ timeout: WAITER_TIMEOUT_MS }));
      // Queued before the inspection below lists it: 200 ms is no bound for a create on a busy machine.
      await eventually(async () => (await zk.children('/s/sem/any/locks')).length === 1, ROUND_TRIPS_MS, 'the waiter queued');
      await sleep(200);
      assert.equal(waiting.settled, false);
      const state = await inspectLock(zk.admin, '/s/sem/any');
      assert.deepEqual(
        state.holders.map((h) => h.sessionId),
        [clients[0].sessionId, clients[1].sessionId],
        'inspection lists both holders in order',
      );
      assert.deepEqual(
        state.waiters.map((w) => w.sessionId),
        [clients[2].sessionId],
        'and the queued waiter',
      );
      await second.release();
      const third = await within(waiting.promise, ROUND_TRIPS_MS, 'waiter woken by the second holder leaving');
      await third.release();
      await first.release();
      await zk.assertNoNodes('/s/sem/any/leases');
      await zk.assertNoNodes('/s/sem/any/locks');
      assert.throws(() => new Semaphore(clients[0], '/s/sem/zero', 0), isLockError('INVALID_ARGUMENT'));
    });
  });
});
