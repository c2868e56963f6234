import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { WatchEvent } from '../../src/index.js';
import { Mutex, MultiLock, Perms, Semaphore } from '../../src/index.js';
import { ROUND_TRIPS_MS, WAITER_TIMEOUT_MS, sessionBound } from '../support/bounds.js';
import { silenceRepliesAfter } from '../support/lose-reply.js';
import { eventually } from '../support/wait.js';
import { RecipeFixture, isLockError, within } from './fixtures.js';

/** Every permission but DELETE: contenders can join, nobody can leave. */
const NO_DELETE = [{ perms: Perms.ALL & ~Perms.DELETE, id: { scheme: 'world', id: 'anyone' } }];

describe('Semaphore and Mutex under faults: deadlines while cut off, expiry while creating leases, failed releases', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  const count = async (path: string): Promise<number> => (await zk.children(path)).length;

  // A session long enough that, until its end, the client cannot have given up the connection:
  // a rejection that waited for a reconnect or the session's end comes with another session.
  const LONG_SESSION = 20_000;

  it('a semaphore waiter whose connection goes silent rejects at its deadline, on its own session, and its queue node goes once the connection is back', async () => {
    const path = '/sf/silent-semaphore';
    const holder = await new Semaphore(await zk.client(), path, 1).acquire();
    const { client, proxy } = await zk.viaProxy({ sessionTimeout: LONG_SESSION });
    const session = client.sessionId;
    const waiting = new Semaphore(client, path, 1).acquire({ leases: 1, timeout: 1500 });
    await eventually(async () => (await count(`${path}/locks`)) === 1, ROUND_TRIPS_MS, 'the waiter heads the queue');
    proxy.blackhole();
    await assert.rejects(waiting, isLockError('LOCK_TIMEOUT'));
    assert.equal(client.sessionId, session, 'rejected before the client gave the session up: the deadline bounded the clean-up');
    proxy.passThrough();
    proxy.resetAll();
    await eventually(async () => (await count(`${path}/locks`)) === 0, sessionBound(LONG_SESSION), 'the queue node was deleted in the background');
    assert.equal(await count(`${path}/leases`), 1, 'only the holder\'s lease');
    await holder.release();
  });

  it('a Mutex waiter whose connection goes silent rejects at its deadline, on its own session, and its node goes once the connection is back', async () => {
    const path = '/sf/silent-mutex';
    const holder = await new Mutex(await zk.client(), path).acquire();
    const { client, proxy } = await zk.viaProxy({ sessionTimeout: LONG_SESSION });
    const session = client.sessionId;
    const waiting = new Mutex(client, path).acquire({ timeout: 1500 });
    await eventually(async () => (await count(path)) === 2, ROUND_TRIPS_MS, 'the waiter queued');
    proxy.blackhole();
    await assert.rejects(waiting, isLockError('LOCK_TIMEOUT'));
    assert.equal(client.sessionId, session, 'rejected before the client gave the session up: the deadline bounded the clean-up');
    proxy.passThrough();
    proxy.resetAll();
    await eventually(async () => (await count(path)) === 1, sessionBound(LONG_SESSION), 'the waiter\'s node was deleted in the background');
    await holder.release();
  });

  it('a k-lease waiter cut off from every server rejects at its deadline without waiting for a reconnect', async () => {
    const path = '/sf/cut-off';
    const holder = await new Semaphore(await zk.client(), path, 2).acquire();
    const { client, proxy } = await zk.viaProxy({ sessionTimeout: LONG_SESSION });
    const session = client.sessionId;
    const waiting = new Semaphore(client, path, 2).acquire({ leases: 2, timeout: 1500 });
    await eventually(async () => (await count(`${path}/locks`)) === 1, ROUND_TRIPS_MS, 'the waiter heads the queue');
    proxy.refuseNew();
    proxy.resetAll();
    await assert.rejects(waiting, isLockError('LOCK_TIMEOUT'));
    assert.notEqual(client.state, 'connected', 'rejected while still cut off');
    assert.equal(client.sessionId, session);
    proxy.passThrough();
    await eventually(async () => (await count(`${path}/locks`)) === 0, sessionBound(LONG_SESSION), 'the queue node was deleted after the reconnect');
    await holder.release();
  });

  it('after the session expires with lease creates in flight, the next node it makes is a queue node: no lease is created outside the queue\'s head', async () => {
    const path = '/sf/expiry';
    const { client, proxy } = await zk.viaProxy({ sessionTimeout: 2000 });
    const semaphore = new Semaphore(client, path, 2);
    await (await semaphore.acquire()).release(); // the path and its limit exist: the next creates are the lease nodes'
    const created: string[] = [];
    const watch = await zk.admin.addWatch(path, { recursive: true });
    watch.on((event: WatchEvent) => {
      if (event.type === 'created') created.push(event.path);
    });
    const session = client.sessionId;
    const silence = silenceRepliesAfter(proxy, '-lease-');
    const acquiring = semaphore.acquire({ leases: 2, timeout: WAITER_TIMEOUT_MS });
    let before = 0;
    try {
      await eventually(() => silence.sent, ROUND_TRIPS_MS, 'the lease creates were sent');
      // Replies stay black-holed, reconnects included, until the client concludes the expiry.
      await eventually(() => client.sessionId !== session, sessionBound(2000), 'the session expired');
      before = created.length;
    } finally {
      silence.restore();
    }
    const group = await within(acquiring, ROUND_TRIPS_MS, 'acquired with the new session');
    assert.ok(group.leases.every((lease) => lease.sessionId !== session));
    const after = created.slice(before);
    assert.ok(after.length >= 3, `a queue node and two leases were created: ${after.join(', ')}`);
    assert.ok(after[0]!.startsWith(`${path}/locks/`), `the first node created after the expiry is a queue node, not a lease: ${after.join(', ')}`);
    await group.release();
    await watch.remove();
    await zk.assertNoNodes(`${path}/leases`);
  });

  it('when deleting the queue node fails after the leases were made, the acquire fails and releases those leases', async () => {
    const path = '/sf/queue-release-fails';
    const client = await zk.client();
    const semaphore = new Semaphore(client, path, 2);
    await (await semaphore.acquire()).release();
    await zk.admin.setACL(`${path}/locks`, NO_DELETE);
    try {
      await assert.rejects(semaphore.acquire({ leases: 2, timeout: WAITER_TIMEOUT_MS }), (error: unknown) => (error as { code?: string }).code === 'NOAUTH');
      assert.equal(await count(`${path}/leases`), 0, 'no lease is left without a holder');
    } finally {
      await zk.admin.setACL(`${path}/locks`, [{ perms: Perms.ALL, id: { scheme: 'world', id: 'anyone' } }]);
    }
    for (const child of await zk.children(`${path}/locks`)) await zk.admin.delete(`${path}/locks/${child}`);
  });

  it('a multi-lease release that fails for one lock still releases the others, then throws', async () => {
    const client = await zk.client();
    const group = await new MultiLock([new Mutex(client, '/sf/multi-a'), new Mutex(client, '/sf/multi-b')]).acquire();
    // Released in reverse order: the failing one first.
    await zk.admin.setACL('/sf/multi-b', NO_DELETE);
    try {
      await assert.rejects(group.release(), (error: unknown) => (error as { code?: string }).code === 'NOAUTH');
      assert.equal(await count('/sf/multi-a'), 0, 'the other lock was released');
    } finally {
      await zk.admin.setACL('/sf/multi-b', [{ perms: Perms.ALL, id: { scheme: 'world', id: 'anyone' } }]);
    }
    for (const child of await zk.children('/sf/multi-b')) await zk.admin.delete(`/sf/multi-b/${child}`);
  });
});
