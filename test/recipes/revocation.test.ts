import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { Lease, ZooKeeperClient } from '../../src/index.js';
import { LockError, Mutex, NonReentrantMutex, ReadWriteLock, inspectLock, requestRevocation } from '../../src/index.js';
import { ROUND_TRIPS_MS, WAITER_TIMEOUT_MS } from '../support/bounds.js';
import { runScript } from '../support/run-script.js';
import { serverWatches } from '../support/server-watches.js';
import { eventually } from '../support/wait.js';
import { isLockError, RecipeFixture, recordRequests, within } from './fixtures.js';

const THROWING = fileURLToPath(new URL('./fixtures/throwing-on-revocation.ts', import.meta.url));

/** The bytes Curator's Revoker.attemptRevoke writes (LockInternals.REVOKE_MESSAGE). */
const CURATOR_REVOKE = Buffer.from('__REVOKE__');

/**
 * Curator's revocation protocol (issue 14): a revocable holder hears a request written into its
 * node and decides itself when to let go. What fires is checked against what the server holds
 * (the node's data, the session's watches, the lock's children), not the lease's word alone.
 */
describe('revocation (Curator\'s protocol)', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  /**
   * Two round trips of `client`: a watch event for a write committed before the first is read
   * before its reply, and a re-read sent on that event is answered before the second's.
   */
  async function settle(client: ZooKeeperClient, path: string): Promise<void> {
    await client.exists(path);
    await client.exists(path);
  }

  it('a revocable holder\'s signal aborts on a request (Curator\'s bytes), not on other writes; the lease stays held until released', async () => {
    const client = await zk.client();
    const calls: Lease[] = [];
    const lease = await new Mutex(client, '/rv/basic', { revocable: true, onRevocationRequested: (l) => calls.push(l) }).acquire({ timeout: ROUND_TRIPS_MS });
    assert.deepEqual(await serverWatches(zk.server, client.sessionId), [lease.node], 'one watch: our own node');

    await zk.admin.setData(lease.node, Buffer.from('someone else\'s note'));
    await settle(client, lease.node);
    assert.equal(lease.revocationRequested.aborted, false, 'another write is not a request');
    assert.deepEqual(await serverWatches(zk.server, client.sessionId), [lease.node], 're-armed after the other write');

    // What Curator's Revoker.attemptRevoke does: setData of the holder's node, any version.
    await zk.admin.setData(lease.node, CURATOR_REVOKE);
    await eventually(() => lease.revocationRequested.aborted, ROUND_TRIPS_MS, 'the request reached the holder');
    const reason = lease.revocationRequested.reason as LockError;
    assert.ok(reason instanceof LockError);
    assert.equal(reason.code, 'REVOCATION_REQUESTED');
    assert.equal(reason.path, lease.node);
    assert.deepEqual(calls, [lease], 'the callback once, with the lease');

    // Only a request: the lock is still ours, by the server's word.
    assert.equal(lease.held, true);
    assert.equal(lease.signal.aborted, false);
    assert.equal((await zk.admin.exists(lease.node))?.ephemeralOwner, client.sessionId);
    await zk.admin.setData(lease.node, CURATOR_REVOKE);
    await settle(client, lease.node);
    assert.equal(calls.length, 1, 'a second request calls nobody again');

    await lease.release();
    await zk.assertNoNodes('/rv/basic');
    assert.deepEqual(await serverWatches(zk.server, client.sessionId), [], 'no watch left');
  });

  it('requestRevocation writes Curator\'s bytes; a request made while the contender waited is on its signal when the lease is handed out', async () => {
    const [holderClient, waiterClient] = [await zk.client(), await zk.client()];
    const holder = await new Mutex(holderClient, '/rv/waiting').acquire({ timeout: ROUND_TRIPS_MS });
    let called = 0;
    const waiting = new NonReentrantMutex(waiterClient, '/rv/waiting', { revocable: true, onRevocationRequested: () => called++ }).acquire({ timeout: WAITER_TIMEOUT_MS });
    await eventually(async () => (await zk.children('/rv/waiting')).length === 2, ROUND_TRIPS_MS, 'the waiter queued');
    const { waiters } = await inspectLock(zk.admin, '/rv/waiting');
    assert.equal(waiters.length, 1);

    assert.equal(await requestRevocation(holderClient, waiters[0]!.path), true);
    assert.deepEqual((await zk.admin.getData(waiters[0]!.path)).data, CURATOR_REVOKE, 'the very bytes Curator\'s holders look for');
    const state = await inspectLock(zk.admin, '/rv/waiting');
    assert.equal(state.waiters[0]!.revocationRequested, true);
    assert.equal(state.waiters[0]!.owner.id, '(revocation requested)');
    assert.equal(state.holders[0]!.revocationRequested, undefined);

    await holder.release();
    const lease = await within(waiting, ROUND_TRIPS_MS, 'the waiter holds after the release');
    assert.equal(lease.revocationRequested.aborted, true, 'aborted when handed out');
    assert.equal(called, 0, 'the callback runs after the caller has the lease, not before');
    await eventually(() => called === 1, ROUND_TRIPS_MS, 'the callback ran');
    assert.equal(lease.held, true);
    await lease.release();
    await zk.assertNoNodes('/rv/waiting');
    assert.deepEqual(await serverWatches(zk.server, waiterClient.sessionId), [], 'no watch left');
  });

  it('a request after the release finds no node (false) and fires nothing; a later holder on the same client is not asked', async () => {
    const client = await zk.client();
    let called = 0;
    const mutex = new Mutex(client, '/rv/after', { revocable: true, onRevocationRequested: () => called++ });
    const lease = await mutex.acquire({ timeout: ROUND_TRIPS_MS });
    const signal = lease.revocationRequested;
    await lease.release();
    assert.equal(await requestRevocation(zk.admin, lease.node), false);
    const next = await mutex.acquire({ timeout: ROUND_TRIPS_MS });
    await settle(client, next.node);
    assert.equal(signal.aborted, false);
    assert.equal(next.revocationRequested.aborted, false);
    assert.equal(called, 0);
    await next.release();
    await zk.assertNoNodes('/rv/after');
    assert.deepEqual(await serverWatches(zk.server, client.sessionId), []);
  });

  it('nothing fires on a lease that ended while its node stays: a request into a downgraded node reaches the read lease only, once', async () => {
    const client = await zk.client();
    const calls: Lease[] = [];
    const ours = new ReadWriteLock(client, '/rv/ended', { revocable: true, onRevocationRequested: (l) => calls.push(l) });
    const write = await ours.writeLock.acquire({ timeout: ROUND_TRIPS_MS });
    const writeSignal = write.revocationRequested;
    const read = await within(ours.downgrade(write), ROUND_TRIPS_MS, 'downgrade');
    assert.equal(await requestRevocation(zk.admin, read.node), true, 'the node is still there');
    await eventually(() => read.revocationRequested.aborted, ROUND_TRIPS_MS, 'the read lease heard');
    await settle(client, read.node);
    assert.equal(writeSignal.aborted, false, 'the handed-over write lease is not asked');
    await eventually(() => calls.length === 1, ROUND_TRIPS_MS, 'the callback ran');
    await settle(client, read.node);
    assert.deepEqual(calls, [read], 'once, with the read lease');
    await read.release();
    await zk.assertNoNodes('/rv/ended');
  });

  it('a lock that is not revocable never hears a request and sends nothing for it: a revocable one sends the same requests (its hand-out read of its node is every lease\'s)', async () => {
    const client = await zk.client();
    // A first lock starts the client's heartbeat (no lease below needs a request to prove its
    // session fresh) and makes the lock path: the acquires below send only what a lock needs.
    await (await new Mutex(client, '/rv/plain').acquire({ timeout: ROUND_TRIPS_MS })).release();
    const named = (requests: string[]): string[] => requests.map((r) => r.replace(/_c_[0-9a-f-]{36}-lock-\d*/, '<node>'));
    const sent = recordRequests(client);
    const plain = await new Mutex(client, '/rv/plain').acquire({ timeout: ROUND_TRIPS_MS });
    const plainSent = [...sent];
    assert.equal(plainSent.filter((r) => r === `getData ${plain.node}`).length, 1, 'one read (and watch) of our own node, at hand-out');
    assert.equal(await requestRevocation(zk.admin, plain.node), true);
    await settle(client, plain.node);
    assert.equal(plain.revocationRequested.aborted, false);
    assert.equal(plain.held, true);
    await plain.release();

    sent.length = 0;
    const revocable = await new Mutex(client, '/rv/plain', { revocable: true }).acquire({ timeout: ROUND_TRIPS_MS });
    assert.deepEqual(named(sent), named(plainSent), 'the same requests: the read (and watch) of our node is the one every lease makes');
    await revocable.release();
    await zk.assertNoNodes('/rv/plain');
  });

  it('read/write lock: a revocable writer hears a request; a downgrade then keeps it pending on the read lease, with our owner data back', async () => {
    const [a, b] = [await zk.client(), await zk.client()];
    const ours = new ReadWriteLock(a, '/rv/rw', { revocable: true, ownerId: 'writer-a' });
    const write = await ours.writeLock.acquire({ timeout: ROUND_TRIPS_MS });
    assert.equal(await requestRevocation(b, write.node), true);
    await eventually(() => write.revocationRequested.aborted, ROUND_TRIPS_MS, 'the writer heard');
    // The request bumped the node's data version: a downgrade that wrote at the creation's version failed here with NOT_HELD.
    const read = await within(ours.downgrade(write), ROUND_TRIPS_MS, 'downgrade');
    assert.equal(read.revocationRequested.aborted, true, 'the request still stands for the read lease');
    const state = await inspectLock(zk.admin, '/rv/rw');
    assert.equal(state.holders[0]!.downgraded, true);
    assert.equal(state.holders[0]!.owner.id, 'writer-a');
    // The marker works: a reader shares the lock.
    const reader = await within(new ReadWriteLock(b, '/rv/rw').readLock.acquire({ timeout: WAITER_TIMEOUT_MS }), ROUND_TRIPS_MS, 'a reader shares');
    await Promise.all([read.release(), reader.release()]);
    await zk.assertNoNodes('/rv/rw');
    assert.deepEqual(await serverWatches(zk.server, a.sessionId), []);
  });

  it('a request heard by the write lease before a downgrade: the read lease\'s signal is aborted, and the callback ran once, not again, never before downgrade returned', async () => {
    const client = await zk.client();
    const calls: Lease[] = [];
    const ours = new ReadWriteLock(client, '/rv/once', { revocable: true, onRevocationRequested: (l) => calls.push(l) });
    const write = await ours.writeLock.acquire({ timeout: ROUND_TRIPS_MS });
    await requestRevocation(zk.admin, write.node);
    await eventually(() => calls.length === 1, ROUND_TRIPS_MS, 'the write lease heard');
    const read = await within(ours.downgrade(write), ROUND_TRIPS_MS, 'downgrade');
    assert.equal(read.revocationRequested.aborted, true, 'still asked');
    await settle(client, read.node);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(calls, [write], 'one request, one call');
    await read.release();
    await zk.assertNoNodes('/rv/once');
  });

  it('downgrade of a lock that is not revocable, after a request overwrote its owner data: marked, owner data back, readers share', async () => {
    const [a, b] = [await zk.client(), await zk.client()];
    const ours = new ReadWriteLock(a, '/rv/plain-rw', { ownerId: 'plain-writer' });
    const write = await ours.writeLock.acquire({ timeout: ROUND_TRIPS_MS });
    assert.equal(await requestRevocation(b, write.node), true);
    const read = await within(ours.downgrade(write), ROUND_TRIPS_MS, 'downgrade');
    assert.equal(read.revocationRequested.aborted, false, 'not revocable: never asked');
    const state = await inspectLock(zk.admin, '/rv/plain-rw');
    assert.equal(state.holders[0]!.downgraded, true);
    assert.equal(state.holders[0]!.owner.id, 'plain-writer');
    assert.equal(state.holders[0]!.revocationRequested, undefined);
    const reader = await within(new ReadWriteLock(b, '/rv/plain-rw').readLock.acquire({ timeout: WAITER_TIMEOUT_MS }), ROUND_TRIPS_MS, 'a reader shares');
    await Promise.all([read.release(), reader.release()]);
    await zk.assertNoNodes('/rv/plain-rw');
  });

  it('an acquire whose first read of its node gets no reply ends at its signal: LockError ABORTED, and its node goes after the reconnect (issue 25 item 4)', async () => {
    // A long session: the client notices the dead connection only after 2/3 of it, long after the abort.
    const { client, proxy } = await zk.viaProxy({ sessionTimeout: 20_000 });
    // The lock path and the heartbeat first: the acquire below then reads our node right after creating it.
    await (await new Mutex(client, '/rv/stalled').acquire({ timeout: ROUND_TRIPS_MS })).release();
    const disconnects: string[] = [];
    client.onState((event) => {
      if (event === 'suspended') disconnects.push(event);
    });
    const controller = new AbortController();
    let stalled = false;
    const unsubscribe = proxy.onChunk((event) => {
      // The node's full name (sequence 1) is first sent by the lease's read of it.
      if (!stalled && event.direction === 'upstream' && event.chunk.includes('-lock-0000000001')) {
        stalled = true;
        proxy.blackhole('downstream');
        controller.abort();
      }
    });
    const session = client.sessionId;
    const acquiring = new Mutex(client, '/rv/stalled', { revocable: true }).acquire({ signal: controller.signal });
    // No lease past the caller's signal: a lease handed out then would be one nobody asked for.
    await assert.rejects(within(acquiring, ROUND_TRIPS_MS, 'the acquire ends at its signal'), isLockError('ABORTED'));
    unsubscribe();
    assert.equal(stalled, true);
    assert.deepEqual(disconnects, [], 'ended by the signal, not by the connection\'s own timeout');
    proxy.resetAll();
    proxy.passThrough();
    // The node's delete waited for the connection: it goes once the session is back.
    await zk.assertNoNodes('/rv/stalled');
    assert.equal(client.sessionId, session, 'the same session: the acquire deleted its node, the server did not');
  });

  it('a revocable read lease hears a request too', async () => {
    const client = await zk.client();
    const lease = await new ReadWriteLock(client, '/rv/reader', { revocable: true }).readLock.acquire({ timeout: ROUND_TRIPS_MS });
    assert.equal(await requestRevocation(zk.admin, lease.node), true);
    await eventually(() => lease.revocationRequested.aborted, ROUND_TRIPS_MS, 'the reader heard');
    await lease.release();
    await zk.assertNoNodes('/rv/reader');
  });

  it('a throwing onRevocationRequested costs the lease nothing: the signal aborts, the lock is held and released, the error is rethrown on its own', { timeout: 90_000 }, async () => {
    const { code, result, stderr } = await runScript(THROWING, [String(zk.server.port)]);
    assert.equal(code, 0, `the process survived: ${stderr}`);
    assert.deepEqual(result, { requested: true, watched: true, held: true, left: 0, uncaught: ['boom: onRevocationRequested'] });
  });

  it('bad input is a typed error: a path that is not a contender, a bad path, a callback without revocable', async () => {
    const client = await zk.client();
    await zk.admin.ensurePath('/rv/bad/not-a-contender');
    await assert.rejects(requestRevocation(client, '/rv/bad/not-a-contender'), isLockError('INVALID_ARGUMENT'));
    await assert.rejects(requestRevocation(client, '/rv/bad'), isLockError('INVALID_ARGUMENT'));
    await assert.rejects(requestRevocation(client, 'relative/lock-0000000001'), { code: 'INVALID_PATH' });
    assert.equal((await zk.admin.getData('/rv/bad/not-a-contender')).data.length, 0, 'nothing written');
    assert.equal(await requestRevocation(client, '/rv/bad/_c_00000000-0000-4000-8000-000000000000-lock-0000000007'), false, 'a contender name that is not there');
    assert.throws(() => new Mutex(client, '/rv/bad', { onRevocationRequested: () => undefined }), isLockError('INVALID_ARGUMENT'));
    assert.throws(() => new Mutex(client, '/rv/bad', { revocable: 'yes' as unknown as boolean }), isLockError('INVALID_ARGUMENT'));
  });
});
