import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { MultiLease } from '../../src/index.js';
import { Perms, Semaphore } from '../../src/index.js';
import { Deadline } from '../../src/recipes/support/deadline.js';
import { verifyLeaseLimit } from '../../src/recipes/locks/lease-limit.js';
import { ROUND_TRIPS_MS, WAITER_TIMEOUT_MS } from '../support/bounds.js';
import { eventually, whileProgressing } from '../support/wait.js';
import { CuratorPeer } from './fixtures/curator-peer.js';
import { RecipeFixture, countListings, isLockError, sharedNow, sleep, track, within } from './fixtures.js';
import { silenceRepliesAfter } from '../support/lose-reply.js';

describe('Semaphore: several leases at once, the recorded limit', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  const leaseCount = async (path: string): Promise<number> => (await zk.children(`${path}/leases`)).length;

  it('a k-lease acquire is all or none: it times out holding nothing while fewer than k slots are free, and gets all k once they are', async () => {
    const path = '/k/none';
    const [a, b] = await Promise.all([zk.client(), zk.client()]);
    const holder = await new Semaphore(a, path, 3).acquire({ leases: 2 });
    assert.equal(holder.leases.length, 2);
    assert.equal(await leaseCount(path), 2, 'two lease nodes on the server');

    const other = new Semaphore(b, path, 3);
    await assert.rejects(other.acquire({ leases: 2, timeout: 300 }), isLockError('LOCK_TIMEOUT'));
    assert.equal(await leaseCount(path), 2, 'the timed-out acquire left no lease node');
    await zk.assertNoNodes(`${path}/locks`, 'nor a queue node');
    assert.equal(await other.tryAcquire({ leases: 2 }), null, 'tryAcquire: 2 of 3 taken, 2 more do not fit');
    assert.equal(await leaseCount(path), 2, 'tryAcquire left no lease node');

    const aborter = new AbortController();
    const aborted = other.acquire({ leases: 2, signal: aborter.signal });
    await eventually(async () => (await zk.children(`${path}/locks`)).length === 1, ROUND_TRIPS_MS, 'the k-lease waiter queued');
    aborter.abort();
    await assert.rejects(aborted, isLockError('ABORTED'));
    assert.equal(await leaseCount(path), 2, 'the aborted acquire left no lease node');
    await zk.assertNoNodes(`${path}/locks`);

    await holder.release();
    const both = await other.tryAcquire({ leases: 2 });
    assert.ok(both, 'two free slots: tryAcquire takes both');
    assert.equal(both.leases.length, 2);
    assert.deepEqual((await other.leaseHolders()).map((h) => h.path).sort(), both.leases.map((l) => l.node).sort(), 'the holders are our two nodes');
    assert.ok(both.held);
    await both.release();
    await zk.assertNoNodes(`${path}/leases`);
  });

  it('a k-lease acquire lists leases/ once, to count them: its k creates send no listing of their own', async () => {
    const path = '/k/listings';
    const client = await zk.client();
    const semaphore = new Semaphore(client, path, 3);
    await (await semaphore.acquire()).release();
    const listed = countListings(client);
    const group = await semaphore.acquire({ leases: 3 });
    assert.deepEqual(listed.filter((p) => p === `${path}/leases`), [`${path}/leases`]);
    await group.release();
  });

  it('a deadline passing while the k creates are in flight leaves none of their nodes once the client is back', async () => {
    const path = '/k/lost-creates';
    const { client, proxy } = await zk.viaProxy({ sessionTimeout: 10_000 });
    const semaphore = new Semaphore(client, path, 3);
    await (await semaphore.acquire()).release(); // the path and its limit exist: the next creates are the lease nodes'
    // The creates reach the server; no reply comes back before the deadline.
    const silence = silenceRepliesAfter(proxy, '-lease-');
    try {
      await assert.rejects(semaphore.acquire({ leases: 3, timeout: 1000 }), isLockError('LOCK_TIMEOUT'));
    } finally {
      silence.stop();
    }
    assert.ok(silence.sent, 'the creates were sent');
    await eventually(async () => (await leaseCount(path)) === 3, ROUND_TRIPS_MS, 'all three creates ran on the server');
    silence.restore();
    await eventually(async () => (await leaseCount(path)) === 0, ROUND_TRIPS_MS, 'the lease nodes created for the abandoned acquire are deleted');
    await zk.assertNoNodes(`${path}/locks`);
  });

  it('a k-lease waiter keeps its place: a single-lease waiter behind it does not take the slot it waits for', async () => {
    const path = '/k/fair';
    const [a, b, c] = await Promise.all([zk.client(), zk.client(), zk.client()]);
    const semA = new Semaphore(a, path, 3);
    const first = await semA.acquire();
    const second = await semA.acquire();
    const wantsTwo = track(new Semaphore(b, path, 3).acquire({ leases: 2, timeout: WAITER_TIMEOUT_MS }));
    await eventually(async () => (await zk.children(`${path}/locks`)).length === 1, ROUND_TRIPS_MS, 'the 2-lease waiter heads the queue');
    const wantsOne = track(new Semaphore(c, path, 3).acquire({ timeout: WAITER_TIMEOUT_MS }));
    await eventually(async () => (await zk.children(`${path}/locks`)).length === 2, ROUND_TRIPS_MS, 'the 1-lease waiter queues behind it');
    await sleep(200);
    assert.equal(wantsOne.settled, false, 'one slot is free, but the waiter ahead wants two: the one behind waits');
    assert.equal(wantsTwo.settled, false);
    assert.equal(await leaseCount(path), 2);

    await first.release();
    const two = await within(wantsTwo.promise, ROUND_TRIPS_MS, 'the 2-lease waiter gets both free slots');
    assert.equal(await leaseCount(path), 3);
    assert.equal(wantsOne.settled, false, 'all 3 taken: the 1-lease waiter still waits');
    await second.release();
    const one = await within(wantsOne.promise, ROUND_TRIPS_MS, 'the 1-lease waiter gets the next free slot');
    await one.release();
    await two.release();
    await zk.assertNoNodes(`${path}/leases`);
    await zk.assertNoNodes(`${path}/locks`);
  });

  it('never more than N leases held under churn of 1-, 2- and 3-lease acquires, by the holders\' log and by the server\'s count', async () => {
    const path = '/k/churn';
    const max = 4;
    const clients = await Promise.all(Array.from({ length: 5 }, () => zk.client()));
    const log: { start: number; end: number; k: number }[] = [];
    let serverPeak = 0;
    let polling = true;
    // The server's own count, read all along by a client that takes no part.
    const poller = (async () => {
      while (polling) {
        const count = await leaseCount(path);
        serverPeak = Math.max(serverPeak, count);
        assert.ok(count <= max, `${count} lease nodes on the server, limit ${max}`);
        await sleep(2);
      }
    })();
    const rounds = 8;
    try {
      await whileProgressing(
        Promise.all(
          clients.map(async (client, i) => {
            const semaphore = new Semaphore(client, path, max);
            for (let round = 0; round < rounds; round++) {
              const k = 1 + ((i + round) % 3);
              const group: MultiLease = await semaphore.acquire({ leases: k, timeout: WAITER_TIMEOUT_MS });
              const start = sharedNow();
              await sleep(3 + Math.random() * 8);
              log.push({ start, end: sharedNow(), k });
              await group.release();
            }
          }),
        ),
        () => log.length,
        'k-lease churn',
      );
    } finally {
      polling = false;
      await poller;
    }
    assert.equal(log.length, rounds * clients.length);
    // At every start, the leases of the holds that overlap it, its own included, fit under the limit.
    for (const hold of log) {
      const overlapping = log.filter((other) => other.start <= hold.start && hold.start < other.end);
      const held = overlapping.reduce((sum, other) => sum + other.k, 0);
      assert.ok(held <= max, `${held} leases held at once at ${hold.start}, limit ${max}`);
    }
    assert.ok(serverPeak <= max);
    await zk.assertNoNodes(`${path}/leases`);
    await zk.assertNoNodes(`${path}/locks`);
  });

  it('bad lease counts are INVALID_ARGUMENT at once, k above the limit included, and leave nothing on the server', async () => {
    const client = await zk.client();
    const semaphore = new Semaphore(client, '/k/bad', 3);
    for (const leases of [0, -1, 1.5, Number.NaN, 4, Infinity]) {
      await assert.rejects(within(semaphore.acquire({ leases }), ROUND_TRIPS_MS, `acquire({ leases: ${leases} })`), isLockError('INVALID_ARGUMENT'));
      await assert.rejects(semaphore.tryAcquire({ leases }), isLockError('INVALID_ARGUMENT'));
    }
    assert.equal(await client.exists('/k/bad'), null, 'nothing was created');
    const all = await semaphore.acquire({ leases: 3 });
    assert.equal(all.leases.length, 3, 'k equal to the limit is fine');
    await all.release();
  });

  it('records the limit in the path\'s data; a contender with another limit fails with LEASE_LIMIT_MISMATCH and leaves no node', async () => {
    const path = '/k/limit';
    const [a, b] = await Promise.all([zk.client(), zk.client()]);
    const lease = await new Semaphore(a, path, 3).acquire();
    assert.equal((await zk.admin.getData(path)).data.toString(), '3', 'the first contender recorded its limit');
    const wrong = new Semaphore(b, path, 2);
    await assert.rejects(wrong.acquire({ timeout: WAITER_TIMEOUT_MS }), isLockError('LEASE_LIMIT_MISMATCH'));
    await assert.rejects(wrong.tryAcquire(), isLockError('LEASE_LIMIT_MISMATCH'));
    assert.equal(await leaseCount(path), 1, 'the mismatched contender took no lease');
    await zk.assertNoNodes(`${path}/locks`);
    const right = await new Semaphore(b, path, 3).acquire();
    await right.release();
    await lease.release();
    assert.equal((await zk.admin.getData(path)).data.toString(), '3', 'the record stays');
  });

  it('an existing path with no data gets the limit recorded; data that is not a number is left alone and not checked', async () => {
    const client = await zk.client();
    // A path as Curator (or zklock before the record) leaves it: persistent, empty.
    await zk.admin.ensurePath('/k/empty/leases');
    await (await new Semaphore(client, '/k/empty', 5).acquire()).release();
    assert.equal((await zk.admin.getData('/k/empty')).data.toString(), '5');

    await zk.admin.ensurePath('/k/foreign');
    await zk.admin.setData('/k/foreign', Buffer.from('owned by an app'));
    await (await new Semaphore(client, '/k/foreign', 2).acquire()).release();
    await (await new Semaphore(client, '/k/foreign', 7).acquire()).release();
    assert.equal((await zk.admin.getData('/k/foreign')).data.toString(), 'owned by an app');
  });

  it('a limit written between our read of the empty data and our write of ours wins: our conditional write fails and we read it', async () => {
    const path = '/k/between';
    await zk.admin.ensurePath(path);
    const client = await zk.client();
    // Another contender's write lands right after our read is answered, before our write is sent.
    const getData = client.getData.bind(client);
    Object.assign(client, {
      getData: async (...args: Parameters<typeof getData>) => {
        const read = await getData(...args);
        if (read.data.length === 0) await zk.admin.setData(path, Buffer.from('3'));
        return read;
      },
    });
    const deadline = new Deadline({ timeout: WAITER_TIMEOUT_MS }, path, 'acquire');
    try {
      await assert.rejects(verifyLeaseLimit(client, path, 2, client.sessionId, deadline, Promise.resolve(Infinity)), isLockError('LEASE_LIMIT_MISMATCH'));
    } finally {
      deadline.dispose();
    }
    assert.equal((await zk.admin.getData(path)).data.toString(), '3', 'the other write stands');
  });

  it('without write permission on the path nothing is recorded, and so nothing is checked (documented)', async () => {
    const path = '/k/no-write';
    await zk.admin.create(path, '', { acl: [{ perms: Perms.ALL & ~Perms.WRITE, id: { scheme: 'world', id: 'anyone' } }] });
    const [a, b] = await Promise.all([zk.client(), zk.client()]);
    const lease = await new Semaphore(a, path, 2).acquire({ timeout: WAITER_TIMEOUT_MS });
    assert.equal((await zk.admin.getData(path)).data.length, 0, 'no record');
    const other = await new Semaphore(b, path, 3).acquire({ timeout: WAITER_TIMEOUT_MS });
    assert.equal(await leaseCount(path), 2, 'a contender with another limit was not stopped');
    await other.release();
    await lease.release();
  });

  it('two first contenders with different limits: exactly one gets a lease, the other LEASE_LIMIT_MISMATCH', async () => {
    for (let trial = 0; trial < 5; trial++) {
      const path = `/k/race-${trial}`;
      const [a, b] = await Promise.all([zk.client(), zk.client()]);
      const outcomes = await Promise.allSettled([new Semaphore(a, path, 2).acquire({ timeout: WAITER_TIMEOUT_MS }), new Semaphore(b, path, 3).acquire({ timeout: WAITER_TIMEOUT_MS })]);
      const won = outcomes.filter((o) => o.status === 'fulfilled');
      const lost = outcomes.filter((o) => o.status === 'rejected');
      assert.equal(won.length, 1, 'one contender got a lease');
      assert.equal(lost.length, 1);
      assert.ok(isLockError('LEASE_LIMIT_MISMATCH')(lost[0]!.reason), String(lost[0]!.reason));
      const recorded = Number((await zk.admin.getData(path)).data.toString());
      assert.equal(recorded, outcomes[0].status === 'fulfilled' ? 2 : 3, 'the record is the winner\'s limit');
      assert.equal(await leaseCount(path), 1);
      for (const o of won) await o.value.release();
    }
  });

  it('Curator\'s InterProcessSemaphoreV2 on the same path ignores the record and leaves it; zklock counts Curator\'s leases', async () => {
    const path = '/k/curator';
    const client = await zk.client();
    const semaphore = new Semaphore(client, path, 3);
    await (await semaphore.acquire()).release();
    const curator = await CuratorPeer.start(zk.server.connectString);
    try {
      const holds = [0, 1].map(() => curator.hold({ kind: 'semaphore', path, leases: 3 }));
      for (const id of holds) await curator.event(id, 'acquired');
      assert.equal(await leaseCount(path), 2, 'Curator holds two leases');
      await zk.assertNoNodes(`${path}/locks`, 'Curator\'s holders left the queue');
      assert.equal(await semaphore.tryAcquire({ leases: 2 }), null, 'two more do not fit beside Curator\'s two');
      const one = await semaphore.tryAcquire();
      assert.ok(one, 'one does: the null above was the count, not a busy queue');
      await one.release();
      const last = await semaphore.acquire({ timeout: WAITER_TIMEOUT_MS });
      assert.equal((await semaphore.leaseHolders()).length, 3);
      await last.release();
      for (const id of holds) {
        curator.release(id);
        await curator.event(id, 'released');
      }
    } finally {
      await curator.close();
    }
    assert.equal((await zk.admin.getData(path)).data.toString(), '3', 'Curator left the record as it was');
    await zk.assertNoNodes(`${path}/leases`);
  });
});
