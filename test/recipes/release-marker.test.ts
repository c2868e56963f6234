import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Lease, WatchEvent, ZooKeeperClient } from '../../src/index.js';
import { Mutex, ReadWriteLock } from '../../src/index.js';
import { ROUND_TRIPS_MS, WAITER_TIMEOUT_MS } from '../support/bounds.js';
import { eventually } from '../support/wait.js';
import { RecipeFixture, seqOf, sleep, within } from './fixtures.js';

/** How long a waiter that wrongly took the lock would have had to show it. */
const SETTLE_MS = 300;

/** Resolves to whether `promise` has settled; never rejects. */
function tracked<T>(promise: Promise<T>): { readonly done: boolean } {
  const state = { done: false };
  promise.then(
    () => (state.done = true),
    () => (state.done = true),
  );
  return state;
}

describe('handoff by release marker', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  /** Queues a Mutex acquire on `client` and waits until its node is in the queue (the `count`-th). */
  async function queue(client: ZooKeeperClient, lockPath: string, count: number, options: { onWake?: () => void; signal?: AbortSignal } = {}): Promise<{ acquiring: Promise<Lease> }> {
    const acquiring = new Mutex(client, lockPath, { onWake: options.onWake }).acquire({ timeout: WAITER_TIMEOUT_MS, signal: options.signal });
    acquiring.catch(() => undefined);
    await eventually(async () => (await zk.children(lockPath)).length === count, ROUND_TRIPS_MS, `contender ${count} queued`);
    // Wrapped: an async function returning the promise itself would resolve only with the lease.
    return { acquiring };
  }

  it('the server: a marker multi fires a data watch with dataChanged only, and a watch re-registered after it answers deleted', async () => {
    const base = '/marker/server';
    await zk.admin.ensurePath(base);
    const watcher = await zk.client();
    const { client: away, proxy } = await zk.viaProxy({ sessionTimeout: 10_000 });
    const releaseWithMarker = async (path: string): Promise<void> => {
      await zk.admin.multi([
        { op: 'setData', path, data: Buffer.from('zklock:released'), version: 0 },
        { op: 'delete', path, version: 1 },
      ]);
    };

    const node = `${base}/a`;
    await zk.admin.create(node, Buffer.from('x'));
    const events: WatchEvent['type'][] = [];
    await watcher.getData(node, { watch: (event) => events.push(event.type) });
    await watcher.exists(node, { watch: (event) => events.push(event.type) });
    await releaseWithMarker(node);
    await eventually(() => events.length > 0, ROUND_TRIPS_MS, 'the watch fired');
    await watcher.sync(base);
    await sleep(50);
    assert.deepEqual(events, ['dataChanged', 'dataChanged'], 'one NodeDataChanged for the session, served to both local watchers; no NodeDeleted');

    // Released while the watching client was away: setWatches finds the node gone and answers NodeDeleted.
    const other = `${base}/b`;
    await zk.admin.create(other, Buffer.from('x'));
    const late: WatchEvent['type'][] = [];
    await away.getData(other, { watch: (event) => late.push(event.type) });
    proxy.blackhole();
    await releaseWithMarker(other);
    proxy.resetAll();
    proxy.passThrough();
    await eventually(() => late.length > 0, ROUND_TRIPS_MS, 'the re-registered watch fired');
    assert.deepEqual(late, ['deleted']);
  });

  it('a waiter woken by its holder-predecessor\'s release holds with no request of its own, though others were ahead in its first listing', async () => {
    const lockPath = '/marker/count';
    const holder = await (await queue(await zk.client(), lockPath, 1)).acquiring;
    const { acquiring: w1 } = await queue(await zk.client(), lockPath, 2);
    const { client, proxy } = await zk.viaProxy({ sessionTimeout: 10_000 });
    let wakes = 0;
    const { acquiring: w2 } = await queue(client, lockPath, 3, { onWake: () => wakes++ });
    await holder.release();
    const first = await w1;
    // The watch on W1 is set (the only thing W2 sends before it waits is answered).
    await sleep(100);
    assert.equal(wakes, 0, 'W2 was not woken by the first release: it watches W1');
    const sent: string[] = [];
    // Requests naming the lock path: the heartbeat's sync('/') and pings name none.
    const stop = proxy.onChunk((event) => {
      if (event.direction === 'upstream' && event.chunk.includes(lockPath)) sent.push(event.chunk.toString('latin1').replace(/[^\x20-\x7e]/g, '.'));
    });
    let lease: Lease;
    try {
      await first.release();
      lease = await within(w2, ROUND_TRIPS_MS, 'W2 holds');
    } finally {
      stop();
    }
    assert.deepEqual(sent, [], 'no request between the wake and the lease');
    assert.equal(wakes, 1);
    assert.ok(lease.held);
    await lease.release();
    await zk.assertNoNodes(lockPath);
  });

  it('a predecessor whose session ends (a plain delete) makes the waiter check the rest of its listing', async () => {
    const lockPath = '/marker/expired';
    const holder = await (await queue(await zk.client(), lockPath, 1)).acquiring;
    const doomed = await zk.client();
    const { acquiring: w1 } = await queue(doomed, lockPath, 2);
    let wakes = 0;
    const { acquiring: w2 } = await queue(await zk.client(), lockPath, 3, { onWake: () => wakes++ });
    const state = tracked(w2);
    await doomed.close();
    await w1.catch(() => undefined);
    await eventually(() => wakes === 1, ROUND_TRIPS_MS, 'W2 woken by W1 going');
    await sleep(SETTLE_MS);
    assert.equal(state.done, false, 'the holder ahead still holds');
    await holder.release();
    await (await within(w2, ROUND_TRIPS_MS, 'W2 holds once the holder went')).release();
    await zk.assertNoNodes(lockPath);
  });

  it('a waiter behind an aborted waiter checks the rest of its listing', async () => {
    const lockPath = '/marker/aborted';
    const holder = await (await queue(await zk.client(), lockPath, 1)).acquiring;
    const abort = new AbortController();
    const { acquiring: w1 } = await queue(await zk.client(), lockPath, 2, { signal: abort.signal });
    let wakes = 0;
    const { acquiring: w2 } = await queue(await zk.client(), lockPath, 3, { onWake: () => wakes++ });
    const state = tracked(w2);
    abort.abort();
    await assert.rejects(w1);
    await eventually(() => wakes === 1, ROUND_TRIPS_MS, 'W2 woken by W1 going');
    await sleep(SETTLE_MS);
    assert.equal(state.done, false, 'the holder ahead still holds');
    await holder.release();
    await (await within(w2, ROUND_TRIPS_MS, 'W2 holds once the holder went')).release();
    await zk.assertNoNodes(lockPath);
  });

  it("kazoo's names: a mutex waiter behind a read/write writer that downgrades (a data change without the promise) keeps waiting", async () => {
    const lockPath = '/marker/downgrade';
    const client = await zk.client();
    const rw = new ReadWriteLock(client, lockPath, { layout: 'kazoo' });
    const write = await rw.writeLock.acquire({ timeout: ROUND_TRIPS_MS });
    let wakes = 0;
    const acquiring = new Mutex(await zk.client(), lockPath, { layout: 'kazoo', onWake: () => wakes++ }).acquire({ timeout: WAITER_TIMEOUT_MS });
    const state = tracked(acquiring);
    await eventually(async () => (await zk.children(lockPath)).length === 2, ROUND_TRIPS_MS, 'the mutex queued');
    await sleep(100);
    const read = await rw.downgrade(write);
    await eventually(() => wakes >= 1, ROUND_TRIPS_MS, 'the mutex waiter woken by the downgrade');
    await sleep(SETTLE_MS);
    assert.equal(state.done, false, 'the downgraded writer still holds a read lock');
    await read.release();
    await (await within(acquiring, ROUND_TRIPS_MS, 'the mutex holds once the reader went')).release();
    await zk.assertNoNodes(lockPath);
  });

  it('a holder whose node was written by someone releases with a plain delete', async () => {
    const lockPath = '/marker/written';
    const lease = await new Mutex(await zk.client(), lockPath).acquire({ timeout: ROUND_TRIPS_MS });
    await zk.admin.setData(lease.node, Buffer.from('scribbled'));
    await lease.release();
    await zk.assertNoNodes(lockPath);
    // The next acquire is unaffected.
    const next = await new Mutex(await zk.client(), lockPath).acquire({ timeout: ROUND_TRIPS_MS });
    assert.ok(seqOf(next.node) > seqOf(lease.node));
    await next.release();
  });
});
