import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ZooKeeperClient } from '../../src/index.js';
import { LockError, ReadWriteLock, ZooKeeperClient as Client, inspectLock, requestRevocation } from '../../src/index.js';
import { FaultProxy } from '../../src/testing/index.js';
import { ROUND_TRIPS_MS, WAITER_TIMEOUT_MS } from '../support/bounds.js';
import { loseReplyTo, silenceRepliesAfter } from '../support/lose-reply.js';
import { serverWatches } from '../support/server-watches.js';
import { eventually } from '../support/wait.js';
import { RecipeFixture, within } from './fixtures.js';

/**
 * Runs `write` (another client's, on the real server) each time one of downgrade's reads of `node`
 * (a getData without a watch; the lease's own reads set one) is answered, before downgrade sees the
 * reply: the write lands between downgrade's read and its versioned write, every time.
 */
function writeAfterEachRead(client: ZooKeeperClient, node: string, write: () => Promise<unknown>): { reads: number } {
  const seen = { reads: 0 };
  const original = client.getData.bind(client);
  Object.assign(client, {
    getData: async (path: string, options: Parameters<ZooKeeperClient['getData']>[1] = {}) => {
      const result = await original(path, options);
      if (path === node && !options.watch) {
        seen.reads++;
        await write();
      }
      return result;
    },
  });
  return seen;
}

/**
 * ReadWriteLock.downgrade against writes it does not expect in its write node: a reply lost in
 * transit, a revocation request between its read and its write, writes that never stop. What
 * counts is what the server holds (the marker, the watches) and what another reader can do.
 */
describe('downgrade when the write node is written meanwhile', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  async function markedDowngraded(lockPath: string): Promise<boolean> {
    return (await inspectLock(zk.admin, lockPath)).holders[0]?.downgraded === true;
  }

  it('a marker write whose reply was lost: the re-read finds the marker, downgrade returns the read lease and the write lease no longer claims the lock', async () => {
    const { client, proxy } = await zk.viaProxy({ sessionTimeout: 6000 });
    const ours = new ReadWriteLock(client, '/dw/lost');
    const write = await ours.writeLock.acquire({ timeout: ROUND_TRIPS_MS });
    // Only downgrade's setData carries the marker.
    const lost = loseReplyTo(proxy, '"downgraded":true');
    const downgrading = ours.downgrade(write);
    await lost;
    const read = await within(downgrading, ROUND_TRIPS_MS, 'downgrade after the lost reply');
    assert.equal(await markedDowngraded('/dw/lost'), true, 'the server holds the marker');
    assert.equal(write.held, false, 'the write lease no longer claims the lock');
    assert.equal(read.held, true);
    assert.equal(read.node, write.node);
    // What the marker means: another zklock reader shares the lock.
    const reader = await within(new ReadWriteLock(zk.admin, '/dw/lost').readLock.acquire({ timeout: WAITER_TIMEOUT_MS }), ROUND_TRIPS_MS, 'a reader shares');
    await Promise.all([read.release(), reader.release()]);
    await zk.assertNoNodes('/dw/lost');
  });

  it('the write lease gives up its claim before the marker can commit: with the reply delayed and another session\'s reader in, it is not held, its signal is aborted and guard() writes nothing', async () => {
    const { client, proxy } = await zk.viaProxy({ sessionTimeout: 10_000 });
    const ours = new ReadWriteLock(client, '/dw/claim');
    const write = await ours.writeLock.acquire({ timeout: ROUND_TRIPS_MS });
    const signal = write.signal;
    const reading = new ReadWriteLock(await zk.client(), '/dw/claim').readLock.acquire({ timeout: WAITER_TIMEOUT_MS });
    await eventually(async () => (await zk.children('/dw/claim')).length === 2, ROUND_TRIPS_MS, 'the reader queued');
    // The marker's write reaches the server; its reply (and every later one) is held back.
    const delayed = silenceRepliesAfter(proxy, '"downgraded":true');
    const downgrading = ours.downgrade(write);
    const theirs = await within(reading, ROUND_TRIPS_MS, 'the reader gets in once the marker committed');
    assert.ok(delayed.sent, 'the marker was sent');
    assert.equal(write.held, false, 'the write lease does not claim the lock while a reader of another session holds');
    assert.equal(signal.aborted, true, 'its signal is aborted');
    await assert.rejects(
      within(write.guard([{ op: 'create', path: '/dw/claim-guarded', data: Buffer.from('x') }]), ROUND_TRIPS_MS, 'guard() answers without the server'),
      (error) => error instanceof LockError && error.code === 'NOT_HELD',
    );
    delayed.restore();
    const read = await within(downgrading, ROUND_TRIPS_MS, 'downgrade once the reply is in');
    assert.equal(read.held, true);
    assert.equal(await zk.admin.exists('/dw/claim-guarded'), null, 'guard() wrote nothing');
    await Promise.all([read.release(), theirs.release()]);
    await zk.assertNoNodes('/dw/claim');
  });

  it('a request landing between downgrade\'s read and write: the versioned write fails, downgrade reads again, marks the node and keeps the request for the read lease', async () => {
    const client = await zk.client();
    let called = 0;
    const ours = new ReadWriteLock(client, '/dw/between', { revocable: true, ownerId: 'ours', onRevocationRequested: () => called++ });
    const write = await ours.writeLock.acquire({ timeout: ROUND_TRIPS_MS });
    let requests = 0;
    const seen = writeAfterEachRead(client, write.node, () => (requests++ === 0 ? requestRevocation(zk.admin, write.node) : Promise.resolve()));
    const read = await within(ours.downgrade(write), ROUND_TRIPS_MS, 'downgrade');
    assert.equal(seen.reads, 2, 'read again after the request');
    assert.equal(read.revocationRequested.aborted, true, 'the request was not lost under the marker');
    const state = await inspectLock(zk.admin, '/dw/between');
    assert.equal(state.holders[0]!.downgraded, true);
    assert.equal(state.holders[0]!.owner.id, 'ours', 'our owner data back, not the request');
    // Whichever lease heard it (the write lease's watch may have), one request is one call.
    await eventually(() => called >= 1, ROUND_TRIPS_MS, 'the callback ran');
    await client.exists(read.node);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(called, 1, 'once');
    await read.release();
    await zk.assertNoNodes('/dw/between');
  });

  it('writes that never stop: after a few attempts downgrade fails with a typed error, never marked, and the write lock is released (the write lease ended before the first marker was sent)', async () => {
    const client = await zk.client();
    const ours = new ReadWriteLock(client, '/dw/conflict');
    const write = await ours.writeLock.acquire({ timeout: ROUND_TRIPS_MS });
    const marked: boolean[] = [];
    writeAfterEachRead(client, write.node, async () => {
      marked.push(await markedDowngraded('/dw/conflict'));
      await zk.admin.setData(write.node, Buffer.from('someone else'));
    });
    await assert.rejects(ours.downgrade(write), (error) => error instanceof LockError && error.code === 'DOWNGRADE_CONFLICT' && error.path === write.node);
    assert.deepEqual(marked, [false, false, false], 'never marked: readers waited throughout');
    assert.equal(write.held, false, 'the write lease claims nothing');
    await zk.assertNoNodes('/dw/conflict');
  });

  it('the write lease\'s watch goes with it: after downgrade the node\'s only watch is the read lease\'s, and it goes with that lease', async () => {
    const client = await zk.client();
    const ours = new ReadWriteLock(client, '/dw/watch');
    const write = await ours.writeLock.acquire({ timeout: ROUND_TRIPS_MS });
    assert.equal(write.signal.aborted, false, 'looking sets the write lease\'s watch');
    await client.exists(write.node);
    assert.deepEqual(await serverWatches(zk.server, client.sessionId), [write.node]);
    const read = await within(ours.downgrade(write), ROUND_TRIPS_MS, 'downgrade');
    // The read lease watches its node from its hand-out, as every lease does.
    await client.exists(write.node);
    assert.deepEqual(await serverWatches(zk.server, client.sessionId), [write.node], 'one watch, the read lease\'s');
    assert.equal(read.held, true);
    await read.release();
    assert.deepEqual(await serverWatches(zk.server, client.sessionId), [], 'none left once released');
    await zk.assertNoNodes('/dw/watch');
  });

  it('the write node deleted (a forced release, an operator) while the marker is on its way: downgrade rejects with NOT_HELD, not a raw NONODE (explorer N2)', async () => {
    const path = '/dw/deleted';
    let node: string | undefined;
    let deleted: Promise<void> | undefined;
    // setData (5) is downgrade's marker: held back until another session has deleted the node.
    const proxy = await FaultProxy.start({
      targetPort: zk.server.port,
      onRequest: ({ opcode }) => {
        if (opcode !== 5 || node === undefined || deleted) return 'forward';
        deleted = zk.admin.delete(node);
        return { delay: 1000 };
      },
    });
    const client = await Client.connect(proxy.connectString, { sessionTimeout: 6000 });
    try {
      const ours = new ReadWriteLock(client, path);
      const write = await ours.writeLock.acquire({ timeout: ROUND_TRIPS_MS });
      node = write.node;
      const downgrading = ours.downgrade(write);
      downgrading.catch(() => undefined);
      await assert.rejects(within(downgrading, ROUND_TRIPS_MS, 'downgrade settles'), (error: unknown) => {
        assert.ok(error instanceof LockError, `a LockError NOT_HELD, got ${String(error)}`);
        assert.equal(error.code, 'NOT_HELD');
        return true;
      });
      await deleted;
      await zk.assertNoNodes(path);
    } finally {
      await client.close();
      await proxy.close();
    }
  });

  it('the client closed as the marker is answered: downgrade rejects with CLOSED, no read lease is handed out after close() (explorer, handed-out-after-close)', async () => {
    const client = await zk.client({ sessionTimeout: 6000 });
    const ours = new ReadWriteLock(client, '/dw/closed');
    const write = await ours.writeLock.acquire({ timeout: ROUND_TRIPS_MS });
    // Once downgrade's marker (its only setData) is answered, before downgrade goes on, the application closes the client.
    let closing: Promise<void> | undefined;
    const setData = client.setData.bind(client);
    Object.assign(client, {
      setData: async (...args: Parameters<ZooKeeperClient['setData']>) => {
        const stat = await setData(...args);
        closing ??= client.close();
        return stat;
      },
    });
    const downgrading = ours.downgrade(write);
    downgrading.catch(() => undefined);
    await assert.rejects(within(downgrading, ROUND_TRIPS_MS, 'downgrade settles'), (error: unknown) => {
      assert.equal((error as { code?: string }).code, 'CLOSED', `rejected with CLOSED, got ${String(error)}`);
      return true;
    });
    assert.ok(closing, 'closed as the marker was answered');
    await closing;
    await zk.assertNoNodes('/dw/closed');
  });
});
