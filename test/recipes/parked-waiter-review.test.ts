import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LockError, Mutex, MultiLock, ReadWriteLock, Semaphore } from '../../src/index.js';
import { ROUND_TRIPS_MS } from '../support/bounds.js';
import { eventually } from '../support/wait.js';
import { RecipeFixture, seqOf, within } from './fixtures.js';
import { scheduledCount } from '../../src/recipes/support/deadline-clock.js';

const THIRTY_DAYS = 30 * 24 * 3600 * 1000;

/**
 * Review of the parked waiter (issue 30): an acquire's timeout is a slot on one process-wide
 * clock, and a parked waiter is told directly when it passes. Checked against the server's own
 * listing (admin client) and the clock's count, not the lock's word.
 */
describe('parked waiters: deadlines, clock slots and nodes', { timeout: 180_000 }, () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  it('an acquire that succeeds (at once or after waiting) leaves no slot on the deadline clock, for every lock kind', async () => {
    const client = await zk.client();
    const base = scheduledCount();
    const mutex = new Mutex(client, '/rev/clock/mutex');
    const held = await mutex.acquire({ timeout: THIRTY_DAYS });
    assert.equal(scheduledCount(), base, 'mutex acquired at once');
    const waiting = mutex.acquire({ timeout: THIRTY_DAYS });
    await eventually(async () => (await zk.children('/rev/clock/mutex')).length === 2, ROUND_TRIPS_MS, 'the waiter queued');
    await held.release();
    const second = await within(waiting, ROUND_TRIPS_MS, 'waiter');
    assert.equal(scheduledCount(), base, 'mutex acquired after waiting');
    await second.release();

    const rw = new ReadWriteLock(client, '/rev/clock/rw');
    const r = await rw.readLock.acquire({ timeout: THIRTY_DAYS });
    assert.equal(scheduledCount(), base, 'read lock');
    await r.release();
    const w = await rw.writeLock.acquire({ timeout: THIRTY_DAYS });
    assert.equal(scheduledCount(), base, 'write lock');
    await w.release();

    const sem = new Semaphore(client, '/rev/clock/sem', 2);
    const s = await sem.acquire({ timeout: THIRTY_DAYS });
    assert.equal(scheduledCount(), base, 'semaphore');
    await s.release();

    const multi = new MultiLock([new Mutex(client, '/rev/clock/m1'), new Mutex(client, '/rev/clock/m2')]);
    const m = await multi.acquire({ timeout: THIRTY_DAYS });
    assert.equal(scheduledCount(), base, 'multi-lock');
    await m.release();
  });

  it('many parked waiters with different timeouts and aborts in every order: each rejects with its own code, promptly, leaving no node and no clock slot', async () => {
    const holderClient = await zk.client();
    const path = '/rev/many';
    const holder = await new Mutex(holderClient, path).acquire();
    const clients = [await zk.client(), await zk.client()];
    const base = scheduledCount();
    const N = 60;
    const controllers: AbortController[] = [];
    const outcomes: Promise<string>[] = [];
    for (let i = 0; i < N; i++) {
      const controller = new AbortController();
      controllers.push(controller);
      const lock = new Mutex(clients[i % 2]!, path);
      // A third bounded by timeout only, a third by signal only, a third by both.
      const options = i % 3 === 0 ? { timeout: 1500 + (i * 37) % 900 } : i % 3 === 1 ? { signal: controller.signal } : { timeout: 1500 + (i * 53) % 900, signal: controller.signal };
      outcomes.push(
        lock.acquire(options).then(
          async (lease) => {
            await lease.release();
            return 'acquired';
          },
          (error: unknown) => (error instanceof LockError ? error.code : String(error)),
        ),
      );
    }
    await eventually(async () => (await zk.children(path)).length === N + 1, ROUND_TRIPS_MS, 'all waiters queued');
    // Abort the signal-bound ones in a shuffled order, some twice.
    const order = [...controllers.keys()].filter((i) => i % 3 !== 0).sort((a, b) => ((a * 7919) % 31) - ((b * 7919) % 31));
    for (const i of order) {
      controllers[i]!.abort(new Error(`abort ${i}`));
      if (i % 5 === 0) controllers[i]!.abort(new Error('again'));
      await new Promise((resolve) => setImmediate(resolve));
    }
    const results = await within(Promise.all(outcomes), 3000 + ROUND_TRIPS_MS, 'every waiter settles');
    results.forEach((code, i) => {
      if (i % 3 === 0) assert.equal(code, 'LOCK_TIMEOUT', `waiter ${i}`);
      else assert.equal(code, 'ABORTED', `waiter ${i}`);
    });
    assert.equal(scheduledCount(), base, 'no clock slot left');
    await eventually(async () => (await zk.children(path)).length === 1, ROUND_TRIPS_MS, 'only the holder is left');
    await holder.release();
    await zk.assertNoNodes(path);
  });

  it('readers parked behind a writer that downgrades, and one whose deadline passes while parked behind the next writer: each ends right, no node left', async () => {
    const a = await zk.client();
    const b = await zk.client();
    const path = '/rev/rw-down';
    const writers = new ReadWriteLock(a, path);
    const w1 = await writers.writeLock.acquire();
    const w2p = writers.writeLock.acquire();
    await eventually(async () => (await zk.children(path)).length === 2, ROUND_TRIPS_MS, 'w2 queued');
    const readers = new ReadWriteLock(b, path);
    const r1 = readers.readLock.acquire({ timeout: THIRTY_DAYS });
    const r2 = readers.readLock.acquire({ timeout: THIRTY_DAYS });
    await eventually(async () => (await zk.children(path)).length === 4, ROUND_TRIPS_MS, 'readers queued');
    const w3p = new ReadWriteLock(a, path).writeLock.acquire({ timeout: THIRTY_DAYS });
    await eventually(async () => (await zk.children(path)).length === 5, ROUND_TRIPS_MS, 'w3 queued');
    const late = readers.readLock.acquire({ timeout: 2500 }).then(
      () => 'acquired',
      (error: unknown) => (error instanceof LockError ? error.code : String(error)),
    );
    await eventually(async () => (await zk.children(path)).length === 6, ROUND_TRIPS_MS, 'late reader queued');
    await w1.release();
    const w2 = await within(w2p, ROUND_TRIPS_MS, 'w2');
    const down = await writers.downgrade(w2);
    const [l1, l2] = await within(Promise.all([r1, r2]), ROUND_TRIPS_MS, 'readers hold after the downgrade');
    assert.equal(await within(late, 2500 + ROUND_TRIPS_MS, 'late reader'), 'LOCK_TIMEOUT');
    await eventually(async () => (await zk.children(path)).length === 4, ROUND_TRIPS_MS, 'the late reader left its node behind');
    await down.release();
    await l1.release();
    await l2.release();
    const w3 = await within(w3p, ROUND_TRIPS_MS, 'w3 after every reader went');
    // The readers' lock object acquires again, behind w3: its reused watcher must hear w3 go.
    const again = readers.readLock.acquire({ timeout: THIRTY_DAYS });
    await eventually(async () => (await zk.children(path)).length === 2, ROUND_TRIPS_MS, 'reader queued again');
    await w3.release();
    await (await within(again, ROUND_TRIPS_MS, 'reader again')).release();
    await zk.assertNoNodes(path);
    assert.equal(scheduledCount(), 0);
  });

  it('aborts and timeouts racing the handoff (as the holder releases, in the same tick and a few ms later): each acquire either holds, alone, with its node there, or rejects; nothing is left', async () => {
    const path = '/rev/race';
    const clients = [await zk.client(), await zk.client(), await zk.client()];
    const base = scheduledCount();
    for (let round = 0; round < 12; round++) {
      const holder = await new Mutex(clients[0]!, path).acquire();
      const N = 8;
      const controllers = Array.from({ length: N }, () => new AbortController());
      let holding = 0;
      let overlap = false;
      const outcomes = controllers.map((controller, i) =>
        new Mutex(clients[i % 3]!, path)
          .acquire(i % 2 === 0 ? { signal: controller.signal } : { signal: controller.signal, timeout: 400 + round * 20 + i * 7 })
          .then(
            async (lease) => {
              if (++holding > 1) overlap = true;
              // The server's word: our node is there, and it is the first of the queue.
              const children = (await zk.children(path)).sort((p1, p2) => seqOf(p1) - seqOf(p2));
              assert.equal(children[0], lease.node.slice(lease.node.lastIndexOf('/') + 1), `round ${round} waiter ${i} holds at the head`);
              holding--;
              await lease.release();
              return 'acquired';
            },
            (error: unknown) => (error instanceof LockError ? error.code : String(error)),
          ),
      );
      await eventually(async () => (await zk.children(path)).length === N + 1, ROUND_TRIPS_MS, 'all queued');
      const releasing = holder.release();
      // Abort some at once, some after the release's reply, some a little later.
      for (let i = 0; i < N; i += 3) controllers[i]!.abort();
      await releasing;
      for (let i = 1; i < N; i += 3) controllers[i]!.abort();
      await new Promise((resolve) => setTimeout(resolve, (round % 4) * 5));
      for (let i = 2; i < N; i += 3) controllers[i]!.abort();
      const results = await within(Promise.all(outcomes), ROUND_TRIPS_MS, `round ${round} settles`);
      for (const r of results) assert.ok(['acquired', 'ABORTED', 'LOCK_TIMEOUT'].includes(r), `round ${round}: ${r}`);
      assert.equal(overlap, false, `round ${round}: two holders at once`);
      await zk.assertNoNodes(path, `round ${round}: no node left`);
    }
    assert.equal(scheduledCount(), base, 'no clock slot left');
  });

  it('a waiter whose node an operator deletes while it is parked queues again when its blocker goes, and gets the lock after the one that was behind it', async () => {
    const path = '/rev/node-lost';
    const a = await zk.client();
    const b = await zk.client();
    const holder = await new Mutex(a, path).acquire();
    const order: string[] = [];
    const w = new Mutex(b, path).acquire({ timeout: 4 * ROUND_TRIPS_MS }).then(async (lease) => {
      order.push('w');
      assert.deepEqual(await zk.children(path), [lease.node.slice(lease.node.lastIndexOf('/') + 1)]);
      await lease.release();
    });
    await eventually(async () => (await zk.children(path)).length === 2, ROUND_TRIPS_MS, 'w queued');
    const wNode = (await zk.children(path)).sort((p1, p2) => seqOf(p1) - seqOf(p2))[1]!;
    const x = new Mutex(a, path).acquire({ timeout: 4 * ROUND_TRIPS_MS }).then(async (lease) => {
      order.push('x');
      await new Promise((resolve) => setTimeout(resolve, 100));
      await lease.release();
    });
    await eventually(async () => (await zk.children(path)).length === 3, ROUND_TRIPS_MS, 'x queued');
    await zk.admin.delete(`${path}/${wNode}`);
    await holder.release();
    await within(Promise.all([w, x]), 3 * ROUND_TRIPS_MS, 'both hold in turn');
    assert.deepEqual(order, ['x', 'w']);
    await zk.assertNoNodes(path);
    assert.equal(scheduledCount(), 0);
  });

  for (const failOnSessionExpiry of [false, true]) {
    it(`a waiter following several blockers (lookahead on) whose session expires while parked${failOnSessionExpiry ? ', with failOnSessionExpiry' : ''}: ${failOnSessionExpiry ? 'rejects SESSIONEXPIRED' : 'queues again once'}, one node at most, and those behind it are not held up`, async () => {
      const path = `/rev/expire-${failOnSessionExpiry}`;
      const a = await zk.client();
      const c = await zk.client();
      const first = await new Mutex(a, path).acquire();
      const aheadWaiting = [new Mutex(a, path).acquire(), new Mutex(a, path).acquire()];
      await eventually(async () => (await zk.children(path)).length === 3, ROUND_TRIPS_MS, 'three ahead');
      const { client, proxy } = await zk.viaProxy({ sessionTimeout: 1200 });
      const oldSession = client.sessionId;
      const x = new Mutex(client, path, { failOnSessionExpiry }).acquire({ timeout: 6 * ROUND_TRIPS_MS });
      x.catch(() => undefined);
      await eventually(async () => (await client.getEphemerals(path)).length === 1, ROUND_TRIPS_MS, 'x queued');
      const behind = new Mutex(c, path).acquire({ timeout: 6 * ROUND_TRIPS_MS });
      await eventually(async () => (await zk.children(path)).length === 5, ROUND_TRIPS_MS, 'one behind x');
      const expired = new Promise((resolve) => client.once('expired', resolve));
      proxy.blackhole('both');
      await within(expired, 4 * ROUND_TRIPS_MS, 'x expired');
      proxy.passThrough();
      // The lock drains: first, the two waiting ahead, then whoever is next.
      await first.release();
      for (const w of aheadWaiting) await (await within(w, ROUND_TRIPS_MS, 'ahead')).release();
      if (failOnSessionExpiry) {
        await assert.rejects(within(x, ROUND_TRIPS_MS, 'x rejects'), (e) => e instanceof LockError && e.code === 'SESSIONEXPIRED');
        await (await within(behind, ROUND_TRIPS_MS, 'the one behind')).release();
      } else {
        // The one behind came before x's new node: it holds first.
        await (await within(behind, ROUND_TRIPS_MS, 'the one behind')).release();
        const lease = await within(x, ROUND_TRIPS_MS, 'x after requeue');
        assert.notEqual(lease.sessionId, oldSession);
        assert.deepEqual(await client.getEphemerals(path), [lease.node], 'x has exactly one node');
        await lease.release();
      }
      await zk.assertNoNodes(path);
    });
  }

  it('many acquires and tries on ONE lock object, bounded and unbounded, some aborted while parked: holds are exclusive and at the head, the unbounded all get their turn, nothing is left', async () => {
    const path = '/rev/one-object';
    const client = await zk.client();
    const lock = new Mutex(client, path);
    const base = scheduledCount();
    for (let round = 0; round < 5; round++) {
      let holding = 0;
      let overlap = false;
      const hold = async (lease: { node: string; release(): Promise<void> }): Promise<string> => {
        if (++holding > 1) overlap = true;
        const children = (await zk.children(path)).sort((p1, p2) => seqOf(p1) - seqOf(p2));
        assert.equal(children[0], lease.node.slice(lease.node.lastIndexOf('/') + 1), 'the holder is at the head');
        await new Promise((resolve) => setTimeout(resolve, 3));
        holding--;
        await lease.release();
        return 'acquired';
      };
      const code = (error: unknown): string => (error instanceof LockError ? error.code : String(error));
      const controllers = Array.from({ length: 12 }, () => new AbortController());
      const outcomes = controllers.map((controller, i) => {
        if (i % 4 === 3) return lock.tryAcquire().then((lease) => (lease ? hold(lease) : 'busy'), code);
        const options = i % 4 === 0 ? {} : i % 4 === 1 ? { timeout: 50 + i * 40 } : { signal: controller.signal };
        return lock.acquire(options).then(hold, code);
      });
      await new Promise((resolve) => setTimeout(resolve, 20 + round * 15));
      for (let i = 2; i < 12; i += 4) controllers[i]!.abort();
      const results = await within(Promise.all(outcomes), 3 * ROUND_TRIPS_MS, `round ${round}`);
      results.forEach((r, i) => {
        if (i % 4 === 0) assert.equal(r, 'acquired', `round ${round} unbounded ${i}`);
        else assert.ok(['acquired', 'ABORTED', 'LOCK_TIMEOUT', 'busy'].includes(r), `round ${round} ${i}: ${r}`);
      });
      assert.equal(overlap, false, `round ${round}: two holders at once`);
      await zk.assertNoNodes(path);
    }
    assert.equal(scheduledCount(), base);
  });

  it('connections reset again and again while waiters are parked and while their checks are in flight: holds stay exclusive and at the head, every acquire settles, nothing is left', async () => {
    const path = '/rev/resets';
    const proxied = [await zk.viaProxy({ sessionTimeout: 6000 }), await zk.viaProxy({ sessionTimeout: 6000 }), await zk.viaProxy({ sessionTimeout: 6000 })];
    let holding = 0;
    let overlap = false;
    let acquired = 0;
    const failures: string[] = [];
    let resetting = true;
    const resets = (async () => {
      let n = 0;
      while (resetting) {
        await new Promise((resolve) => setTimeout(resolve, 40 + ((n * 37) % 120)));
        proxied[n % 3]!.proxy.resetAll();
        n++;
      }
    })();
    const worker = async (w: number): Promise<void> => {
      const { client } = proxied[w % 3]!;
      for (let k = 0; k < 6; k++) {
        const lock = new Mutex(client, path);
        try {
          const lease = await lock.acquire(k % 2 === 0 ? { timeout: 4 * ROUND_TRIPS_MS } : { timeout: 150 + w * 30 });
          if (++holding > 1) overlap = true;
          acquired++;
          await new Promise((resolve) => setTimeout(resolve, 5));
          holding--;
          await lease.release();
        } catch (error) {
          if (!(error instanceof LockError && error.code === 'LOCK_TIMEOUT')) failures.push(String(error));
        }
      }
    };
    await within(Promise.all(Array.from({ length: 9 }, (_, w) => worker(w))), 8 * ROUND_TRIPS_MS, 'every worker finishes');
    resetting = false;
    await resets;
    assert.equal(overlap, false, 'two holders at once');
    assert.deepEqual(failures, []);
    assert.ok(acquired > 0);
    await zk.assertNoNodes(path);
    assert.equal(scheduledCount(), 0);
  });
});
