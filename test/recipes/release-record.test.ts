import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Lease, ZooKeeperClient } from '../../src/index.js';
import { Mutex, Perms, ReadWriteLock, digestAcl } from '../../src/index.js';
import { ROUND_TRIPS_MS, WAITER_TIMEOUT_MS } from '../support/bounds.js';
import { eventually, whileProgressing } from '../support/wait.js';
import { RecipeFixture, countListings, seqOf, sleep } from './fixtures.js';

/**
 * `waiters` contenders (each its own Mutex, all on `waiterClient`) queue behind a holder on
 * another client, then the lock is handed down the queue. Checks that only one holds at a time
 * and that they hold in queue order; returns the node names in the order they held. `queued` is
 * called once everyone queued, before the holder releases.
 */
async function drainQueue(zk: RecipeFixture, lockPath: string, waiterClient: ZooKeeperClient, waiters: number, queued?: () => void): Promise<string[]> {
  const first = await new Mutex(await zk.client(), lockPath).acquire();
  let holding = 0;
  const order: string[] = [];
  const done = Array.from({ length: waiters }, async () => {
    // The last waiter waits for every handoff before its own: each is bounded by whileProgressing below.
    const lease: Lease = await new Mutex(waiterClient, lockPath).acquire({ timeout: waiters * ROUND_TRIPS_MS });
    holding++;
    assert.equal(holding, 1, 'never two holders');
    order.push(lease.node);
    holding--;
    await lease.release();
  });
  await eventually(async () => (await zk.children(lockPath)).length === waiters + 1, ROUND_TRIPS_MS, 'everyone queued');
  queued?.();
  const inQueue = (await zk.children(lockPath)).filter((name) => `${lockPath}/${name}` !== first.node);
  await first.release();
  await whileProgressing(Promise.all(done), () => order.length, 'the queue drained');
  assert.deepEqual(
    order.map(seqOf),
    inQueue.map((name) => seqOf(name)).sort((a, b) => a - b),
    'held in queue order',
  );
  await zk.assertNoNodes(lockPath);
  return order.map((path) => path.slice(lockPath.length + 1));
}

describe('release records on the lock path', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  it('hand a long queue down without listing it again: each holder names its node in the lock path as it goes', async () => {
    const lockPath = '/rr/long';
    const client = await zk.client();
    const listed = countListings(client);
    // Past 16 nodes left ahead, a waiter without a record would list the queue when woken.
    let joining = -1;
    const order = await drainQueue(zk, lockPath, client, 24, () => (joining = listed.length));
    // The joins of one client share listings (shared-listing.ts): at most one each.
    assert.ok(joining >= 1 && joining <= 24, `${joining} listings to join: one per waiter at most, each pipelined with a create`);
    assert.equal(listed.length, joining, 'none when woken');
    const { data } = await zk.admin.getData(lockPath);
    assert.equal(data.toString(), `zklock:released:${order.at(-1)}`, 'the last holder recorded its release');
  });

  it('a writer behind a long line of readers (which leave no records) gets the lock when they go', async () => {
    const lockPath = '/rr/readers';
    const client = await zk.client();
    const rw = new ReadWriteLock(client, lockPath);
    const readers = await Promise.all(Array.from({ length: 20 }, () => rw.readLock.acquire({ timeout: ROUND_TRIPS_MS })));
    const writer = rw.writeLock.acquire({ timeout: WAITER_TIMEOUT_MS });
    await eventually(async () => (await zk.children(lockPath)).length === 21, ROUND_TRIPS_MS, 'the writer queued');
    let written = false;
    writer.then(
      () => (written = true),
      () => undefined,
    );
    // Nearest first, so the writer wakes with more than 16 readers still ahead, none of which leaves a record.
    const nearestFirst = [...readers].sort((a, b) => seqOf(b.node) - seqOf(a.node));
    for (const reader of nearestFirst.slice(0, -1)) await reader.release();
    await sleep(100);
    assert.equal(written, false, 'the oldest reader still holds');
    await nearestFirst.at(-1)!.release();
    await (await writer).release();
    await zk.assertNoNodes(lockPath);
  });

  it('never overwrite data that someone keeps on the lock path', async () => {
    const lockPath = '/rr/userdata';
    await zk.admin.ensurePath('/rr');
    await zk.admin.create(lockPath, 'config v1');
    const client = await zk.client();
    await drainQueue(zk, lockPath, client, 20);
    assert.equal((await zk.admin.getData(lockPath)).data.toString(), 'config v1');
  });

  it('never overwrite data written on the lock path after the holder read it', async () => {
    const lockPath = '/rr/written-meanwhile';
    const [a, b] = [await zk.client(), await zk.client()];
    const first = await new Mutex(a, lockPath).acquire();
    const waiters: Promise<Lease>[] = [];
    for (let i = 1; i <= 3; i++) {
      waiters.push(new Mutex(b, lockPath).acquire({ timeout: WAITER_TIMEOUT_MS }));
      await eventually(async () => (await zk.children(lockPath)).length === i + 1, ROUND_TRIPS_MS, `waiter ${i} queued`);
    }
    await first.release();
    await (await waiters[0]!).release();
    // The second waiter read the lock path (empty) when the first waiter went, the first holder still in its listing.
    const second = await waiters[1]!;
    await zk.admin.setData(lockPath, 'config v2');
    await second.release();
    await (await waiters[2]!).release();
    assert.equal((await zk.admin.getData(lockPath)).data.toString(), 'config v2');
    await zk.assertNoNodes(lockPath);
  });

  it('a contender that may create but not list leaves no node behind', async () => {
    const lockPath = '/rr/unlistable';
    await zk.admin.ensurePath('/rr');
    const admin = await zk.client();
    await admin.addAuth('digest', 'admin:pw');
    await admin.create(lockPath, '', { acl: [digestAcl('admin', 'pw'), { perms: Perms.CREATE | Perms.DELETE, id: { scheme: 'world', id: 'anyone' } }] });
    const client = await zk.client();
    await assert.rejects(new Mutex(client, lockPath).acquire({ timeout: ROUND_TRIPS_MS }), { code: 'NOAUTH' });
    assert.deepEqual((await admin.getChildren(lockPath)).children, []);
  });

  it('on a lock path the contenders may not write, releases delete their nodes without a record', async () => {
    const lockPath = '/rr/readonly';
    await zk.admin.ensurePath('/rr');
    await zk.admin.create(lockPath, '', { acl: [{ perms: Perms.READ | Perms.CREATE | Perms.DELETE, id: { scheme: 'world', id: 'anyone' } }] });
    const client = await zk.client();
    await drainQueue(zk, lockPath, client, 20);
    const { data } = await zk.admin.getData(lockPath);
    assert.equal(data.length, 0, 'nothing was written');
  });
});
