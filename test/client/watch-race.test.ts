import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RequestMessage, WatchEvent, ZooKeeperClient } from '../../src/index.js';
import { LockError, ReadWriteLock, requestChannel } from '../../src/index.js';
import { RecipeFixture, within } from '../recipes/fixtures.js';
import { serverWatches } from '../support/server-watches.js';
import { removedWatcher } from '../support/removed-watcher.js';
import { deferred, eventually } from '../support/wait.js';

/**
 * removeWatcher must not remove a server watch that another request of the same client is
 * setting: the server keeps one watch per (session, path, kind), so removing it for one caller
 * removes it for every caller.
 */
describe('one-shot watches of one client racing removeWatcher', () => {
  let zk: RecipeFixture;
  let client: ZooKeeperClient;
  // Events are pushed by the server; the bound is only for a broken test: generous, as the machine is busy.
  const EVENT_BOUND_MS = 20_000;

  before(async () => {
    zk = await RecipeFixture.start();
    client = await zk.client();
  });
  after(async () => {
    await zk?.close();
  });

  it('a watcher whose getData is in flight still fires after another watcher of the path is removed', async () => {
    await zk.admin.create('/race-data', 'v1');
    const first = removedWatcher();
    await client.getData('/race-data', { watch: first });
    const fired = deferred<WatchEvent>();
    // Same tick: the second getData is on the wire, its reply not yet read, when the first watcher goes.
    const second = client.getData('/race-data', { watch: (event) => fired.resolve(event) });
    const removed = client.removeWatcher('/race-data', first);
    await Promise.all([second, removed]);
    await zk.admin.setData('/race-data', 'v2');
    const event = await within(fired.promise, EVENT_BOUND_MS, 'the second watcher is called');
    assert.deepEqual(event, { type: 'dataChanged', path: '/race-data' });
  });

  it('an exists watch in flight (a creation watch on a missing node) survives the removal of a data watcher', async () => {
    await zk.admin.create('/race-exist', 'v1');
    const first = removedWatcher();
    await client.getData('/race-exist', { watch: first });
    const fired = deferred<WatchEvent>();
    const second = client.exists('/race-exist', { watch: (event) => fired.resolve(event) });
    const removed = client.removeWatcher('/race-exist', first);
    await Promise.all([second, removed]);
    await zk.admin.delete('/race-exist');
    assert.deepEqual(await within(fired.promise, EVENT_BOUND_MS, 'the exists watcher is called'), { type: 'deleted', path: '/race-exist' });
  });

  it('a children watch in flight survives the removal of another children watcher', async () => {
    await zk.admin.create('/race-child');
    const first = removedWatcher();
    await client.getChildren('/race-child', { watch: first });
    const fired = deferred<WatchEvent>();
    const second = client.getChildren('/race-child', { watch: (event) => fired.resolve(event) });
    const removed = client.removeWatcher('/race-child', first);
    await Promise.all([second, removed]);
    await zk.admin.create('/race-child/c');
    assert.deepEqual(await within(fired.promise, EVENT_BOUND_MS, 'the second children watcher is called'), { type: 'childrenChanged', path: '/race-child' });
  });

  it('a removal kept back for a request in flight happens once that request ends without setting a watch', async () => {
    await zk.admin.create('/race-owed', 'v1');
    const first = removedWatcher();
    await client.getData('/race-owed', { watch: first });
    const abort = new AbortController();
    const second = client.getData('/race-owed', { watch: () => assert.fail('an aborted request registers nothing'), signal: abort.signal });
    // Same tick: the removal is kept back for the second request, which then fails without a reply.
    const removed = client.removeWatcher('/race-owed', first);
    abort.abort();
    await assert.rejects(second, { code: 'ABORTED' });
    await removed;
    await eventually(async () => !(await serverWatches(zk.server, client.sessionId)).includes('/race-owed'), EVENT_BOUND_MS, 'the server watch removed');
  });

  it('a watcher removed while its own request is in flight is never registered, and its server watch goes', async () => {
    await zk.admin.create('/race-early', 'v1');
    const early = (): void => assert.fail('a watcher removed while its request was in flight must not be called');
    const pending = client.getData('/race-early', { watch: early });
    await client.removeWatcher('/race-early', early);
    await pending;
    await eventually(async () => !(await serverWatches(zk.server, client.sessionId)).includes('/race-early'), EVENT_BOUND_MS, 'the server watch removed');
    await zk.admin.setData('/race-early', 'v2');
    // Nothing fires: a later watch on another path proves the notifications before it were delivered (one session's events are ordered).
    const marker = deferred<WatchEvent>();
    await zk.admin.create('/race-early-marker');
    await client.exists('/race-early-marker', { watch: (event) => marker.resolve(event) });
    await zk.admin.delete('/race-early-marker');
    await within(marker.promise, EVENT_BOUND_MS, 'the marker watch fires');
  });

  it('two readers of one process waiting for one writer: one aborts, the other gets the lock once the writer releases', async () => {
    const writerClient = await zk.client();
    const writer = await new ReadWriteLock(writerClient, '/race-rw').writeLock.acquire({ timeout: 10_000 });
    const rw = new ReadWriteLock(client, '/race-rw');
    // Stage the race: reader 2's getData on the writer's node is on the wire when reader 1 aborts.
    const writerNode = writer.node;
    const reader1Watching = deferred<void>();
    const abort1 = new AbortController();
    let calls = 0;
    let first: RequestMessage | undefined;
    // Each reader's watched read of the writer's node, seen on zklock:client:request: `end` comes
    // once the request is queued, `asyncEnd` once its reply is in.
    const ours = (message: RequestMessage): boolean => message.op === 'getData' && message.path === writerNode && message.sessionId === `0x${client.sessionId.toString(16)}`;
    const onQueued = (data: unknown): void => {
      const message = data as RequestMessage;
      if (!ours(message)) return;
      calls++;
      if (calls === 1) first = message;
      if (calls === 2) abort1.abort();
    };
    const onAnswered = (message: unknown): void => {
      if (message === first) reader1Watching.resolve();
    };
    requestChannel.end.subscribe(onQueued);
    requestChannel.asyncEnd.subscribe(onAnswered);
    try {
      const reader1 = rw.readLock.acquire({ signal: abort1.signal });
      reader1.catch(() => undefined);
      await within(reader1Watching.promise, EVENT_BOUND_MS, 'reader 1 watches the writer');
      const reader2 = rw.readLock.acquire();
      await assert.rejects(
        within(reader1, EVENT_BOUND_MS, 'reader 1 gives up'),
        (error) => error instanceof LockError && error.code === 'ABORTED',
      );
      assert.equal(calls, 2, 'reader 2 watched the writer while reader 1 aborted');
      await writer.release();
      const lease = await within(reader2, EVENT_BOUND_MS, 'reader 2 acquires once the writer released');
      await lease.release();
    } finally {
      requestChannel.end.unsubscribe(onQueued);
      requestChannel.asyncEnd.unsubscribe(onAnswered);
    }
  });
});
