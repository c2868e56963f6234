import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { PersistentWatch, WatchEvent, ZooKeeperClient } from '../../src/index.js';
import type { FaultProxy } from '../../src/testing/index.js';
import { RecipeFixture, within } from '../recipes/fixtures.js';
import { ROUND_TRIPS_MS, sessionBound } from '../support/bounds.js';
import { serverWatches } from '../support/server-watches.js';
import { removedWatcher } from '../support/removed-watcher.js';
import { deferred, eventually, nextEvent } from '../support/wait.js';

describe('persistent watches', () => {
  let zk: RecipeFixture;
  let client: ZooKeeperClient;

  before(async () => {
    zk = await RecipeFixture.start();
    client = await zk.client();
  });
  after(async () => {
    await zk?.close();
  });

  /**
   * A 3.8 server keeps one watch mode per (connection, path) in each of its data and child watch
   * tables (ZOOKEEPER-4466, fixed in 3.9.0): a one-shot watch set on a path the session watches
   * persistently turns the persistent registration into a one-shot one that the next event ends,
   * and removeWatches removes it whole. The client serves such one-shot watches from the
   * persistent watch's events instead. These tests run against the installed 3.8 server; each
   * counts the persistent watch's events, which the server's bug cut short.
   */
  describe('one-shot watches beside a persistent watch on the same path', () => {
    /** The events `watch` has had so far. */
    function collect(watch: PersistentWatch): WatchEvent[] {
      const events: WatchEvent[] = [];
      watch.on((event) => events.push(event));
      return events;
    }

    /**
     * Runs `writes` from another session, then waits until `on` has had every notification they
     * caused: on one server, a sync of that session is answered after the notifications of the
     * writes committed before it.
     */
    async function settled(on: ZooKeeperClient, writes: () => Promise<unknown>): Promise<void> {
      await writes();
      await on.sync('/');
    }

    /** `count` new values for `path`, one write each. */
    async function rewrite(path: string, count: number): Promise<void> {
      for (let i = 0; i < count; i++) await zk.admin.setData(path, `${Date.now()}-${i}`);
    }

    /** A watcher the tests remove: it must hear nothing but its removal. */
    const never = removedWatcher();

    it('a getData watch fires once and leaves every event to the persistent watch, also once removed', async () => {
      await zk.admin.create('/pos-data', 'v0');
      const watch = await client.addWatch('/pos-data');
      const events = collect(watch);
      const oneShot = deferred<WatchEvent>();
      await client.getData('/pos-data', { watch: oneShot.resolve });
      await settled(client, () => rewrite('/pos-data', 3));
      assert.deepEqual(await within(oneShot.promise, ROUND_TRIPS_MS, 'the one-shot watch fires'), { type: 'dataChanged', path: '/pos-data' });
      assert.equal(events.length, 3, 'the persistent watch has every change');

      await client.getData('/pos-data', { watch: never });
      await client.removeWatcher('/pos-data', never);
      await settled(client, () => rewrite('/pos-data', 3));
      assert.equal(events.length, 6, 'the persistent watch has every change after the one-shot watcher was removed');
      assert.equal(watch.active, true);

      await watch.remove();
      assert.equal(watch.active, false);
      await eventually(async () => !(await serverWatches(zk.server, client.sessionId)).includes('/pos-data'), ROUND_TRIPS_MS, 'no server watch left');
    });

    it('an exists watch on a missing node and a getChildren watch fire once each, and the persistent watch has every event', async () => {
      const watch = await client.addWatch('/pos-exist');
      const events = collect(watch);
      const created = deferred<WatchEvent>();
      assert.equal(await client.exists('/pos-exist', { watch: created.resolve }), null);
      await zk.admin.create('/pos-exist');
      assert.deepEqual(await within(created.promise, ROUND_TRIPS_MS, 'the exists watch fires'), { type: 'created', path: '/pos-exist' });
      let childEvents = 0;
      await client.getChildren('/pos-exist', { watch: () => childEvents++ });
      await settled(client, async () => {
        await zk.admin.create('/pos-exist/a');
        await zk.admin.create('/pos-exist/b');
        await zk.admin.setData('/pos-exist', 'changed');
      });
      assert.equal(childEvents, 1);
      assert.deepEqual(
        events.map((event) => event.type),
        ['created', 'childrenChanged', 'childrenChanged', 'dataChanged'],
      );
      await watch.remove();
    });

    it('a recursive watch serves data and children watches on its own path and keeps every event below it; one below it needs no service', async () => {
      await zk.admin.create('/pos-tree');
      await zk.admin.create('/pos-tree/x');
      const watch = await client.addWatch('/pos-tree', { recursive: true });
      const events = collect(watch);
      const data = deferred<WatchEvent>();
      const children = deferred<WatchEvent>();
      const below = deferred<WatchEvent>();
      await client.getData('/pos-tree', { watch: data.resolve });
      await client.getChildren('/pos-tree', { watch: children.resolve });
      await client.getData('/pos-tree/x', { watch: below.resolve });
      await settled(client, async () => {
        await zk.admin.setData('/pos-tree/x', '1');
        await zk.admin.create('/pos-tree/y');
        await zk.admin.setData('/pos-tree', '1');
        await zk.admin.setData('/pos-tree/x', '2');
      });
      assert.deepEqual(await within(data.promise, ROUND_TRIPS_MS, 'the data watch fires'), { type: 'dataChanged', path: '/pos-tree' });
      // A recursive watch has no childrenChanged: the creation of a child is the children's change.
      assert.deepEqual(await within(children.promise, ROUND_TRIPS_MS, 'the children watch fires'), { type: 'childrenChanged', path: '/pos-tree' });
      assert.deepEqual(await within(below.promise, ROUND_TRIPS_MS, 'the data watch below fires'), { type: 'dataChanged', path: '/pos-tree/x' });
      assert.deepEqual(events, [
        { type: 'dataChanged', path: '/pos-tree/x' },
        { type: 'created', path: '/pos-tree/y' },
        { type: 'dataChanged', path: '/pos-tree' },
        { type: 'dataChanged', path: '/pos-tree/x' },
      ]);
      await watch.remove();
      await eventually(async () => !(await serverWatches(zk.server, client.sessionId)).includes('/pos-tree'), ROUND_TRIPS_MS, 'no server watch left');
    });

    it('one-shot watches set before the persistent watch are served by it, and their removal leaves it whole', async () => {
      await zk.admin.create('/pos-before', 'v0');
      await client.getData('/pos-before', { watch: never });
      const watch = await client.addWatch('/pos-before');
      const events = collect(watch);
      await client.removeWatcher('/pos-before', never);
      await settled(client, () => rewrite('/pos-before', 3));
      assert.equal(events.length, 3, 'the persistent watch has every change');
      await watch.remove();

      // A 3.8 server puts a recursive watch in its child table too, where it reports no children's change.
      await zk.admin.create('/pos-before-tree');
      const children = deferred<WatchEvent>();
      await client.getChildren('/pos-before-tree', { watch: children.resolve });
      const tree = await client.addWatch('/pos-before-tree', { recursive: true });
      await zk.admin.create('/pos-before-tree/c');
      assert.deepEqual(await within(children.promise, ROUND_TRIPS_MS, 'the children watch fires'), { type: 'childrenChanged', path: '/pos-before-tree' });
      await tree.remove();
    });

    it('a one-shot watch set while the addWatch is in flight is served by the persistent watch', async () => {
      await zk.admin.create('/pos-racing', 'v0');
      const oneShot = deferred<WatchEvent>();
      // Same tick: the getData goes out behind the addWatch, before its reply.
      const [watch] = await Promise.all([client.addWatch('/pos-racing'), client.getData('/pos-racing', { watch: oneShot.resolve })]);
      const events = collect(watch);
      await settled(client, () => rewrite('/pos-racing', 3));
      assert.deepEqual(await within(oneShot.promise, ROUND_TRIPS_MS, 'the one-shot watch fires'), { type: 'dataChanged', path: '/pos-racing' });
      assert.equal(events.length, 3, 'the persistent watch has every change');
      await watch.remove();
    });

    it('removing the persistent watch sets the one-shot watches it served on the server, and then nothing is left', async () => {
      await zk.admin.create('/pos-handover', 'v0');
      const watch = await client.addWatch('/pos-handover');
      const data = deferred<WatchEvent>();
      const children = deferred<WatchEvent>();
      await client.getData('/pos-handover', { watch: data.resolve });
      await client.getChildren('/pos-handover', { watch: children.resolve });
      await watch.remove();
      assert.equal(watch.active, false);
      await zk.admin.setData('/pos-handover', 'v1');
      await zk.admin.create('/pos-handover/c');
      assert.deepEqual(await within(data.promise, ROUND_TRIPS_MS, 'the data watch fires'), { type: 'dataChanged', path: '/pos-handover' });
      assert.deepEqual(await within(children.promise, ROUND_TRIPS_MS, 'the children watch fires'), { type: 'childrenChanged', path: '/pos-handover' });
      await eventually(async () => !(await serverWatches(zk.server, client.sessionId)).includes('/pos-handover'), ROUND_TRIPS_MS, 'no server watch left');
    });

    describe('across connections', () => {
      let proxied: ZooKeeperClient;
      let proxy: FaultProxy;

      before(async () => {
        ({ client: proxied, proxy } = await zk.viaProxy({ sessionTimeout: 6000 }));
      });

      /** Drops the connection, runs `meanwhile` while no new one is let through, then waits for the reconnect. */
      async function disconnected(meanwhile: () => Promise<void>): Promise<void> {
        const suspended = nextEvent(proxied, 'suspended');
        proxy.refuseNew(true);
        proxy.resetAll();
        await suspended;
        try {
          await meanwhile();
        } finally {
          proxy.refuseNew(false);
        }
        await nextEvent(proxied, 'reconnected', sessionBound(proxied.sessionTimeout));
      }

      it('after a reconnect, a change made meanwhile fires the one-shot watches, and both kinds keep working', async () => {
        await zk.admin.create('/pos-reconnect', 'v0');
        await zk.admin.create('/pos-reconnect-tree');
        const watch = await proxied.addWatch('/pos-reconnect');
        const events = collect(watch);
        const tree = await proxied.addWatch('/pos-reconnect-tree', { recursive: true });
        const missed = deferred<WatchEvent>();
        const children = deferred<WatchEvent>();
        await proxied.getData('/pos-reconnect', { watch: missed.resolve });
        await proxied.getChildren('/pos-reconnect-tree', { watch: children.resolve });
        await disconnected(() => zk.admin.setData('/pos-reconnect', 'v1').then(() => undefined));
        // SetWatches reports a change after the session's last zxid to the one-shot watches it lists.
        assert.deepEqual(await within(missed.promise, ROUND_TRIPS_MS, 'the one-shot watch fires'), { type: 'dataChanged', path: '/pos-reconnect' });
        await zk.admin.create('/pos-reconnect-tree/c');
        assert.deepEqual(await within(children.promise, ROUND_TRIPS_MS, 'the children watch fires'), { type: 'childrenChanged', path: '/pos-reconnect-tree' });

        const after = events.length;
        const oneShot = deferred<WatchEvent>();
        await proxied.getData('/pos-reconnect', { watch: oneShot.resolve });
        await settled(proxied, () => rewrite('/pos-reconnect', 3));
        assert.deepEqual(await within(oneShot.promise, ROUND_TRIPS_MS, 'the one-shot watch fires'), { type: 'dataChanged', path: '/pos-reconnect' });
        await proxied.getData('/pos-reconnect', { watch: never });
        await proxied.removeWatcher('/pos-reconnect', never);
        await settled(proxied, () => rewrite('/pos-reconnect', 3));
        assert.equal(events.length - after, 6, 'the persistent watch has every change');
        assert.equal(watch.active, true);
        await watch.remove();
        await tree.remove();
      });

      it('tells persistent and recursive watches, listeners and iterators, of the gap: disconnected, then reconnected', async () => {
        await zk.admin.create('/pos-gap');
        await zk.admin.create('/pos-gap-tree');
        const shallow = await proxied.addWatch('/pos-gap');
        const tree = await proxied.addWatch('/pos-gap-tree', { recursive: true });
        const heard = { shallow: collect(shallow), tree: collect(tree) };
        const iterated: string[] = [];
        const iteration = (async () => {
          for await (const event of tree) {
            iterated.push(`${event.type} ${event.path}`);
            if (event.path === '/pos-gap-tree/after') break;
          }
        })();
        // Changed while disconnected: the server's re-registered persistent watch does not report it.
        await disconnected(() => zk.admin.create('/pos-gap-tree/meanwhile').then(() => undefined));
        // `reconnected` comes with the handshake; the re-registration (setWatches) is in effect once a later request is answered.
        await proxied.sync('/');
        await zk.admin.create('/pos-gap-tree/after');
        await within(iteration, ROUND_TRIPS_MS, 'the iterator has the change made after the reconnect');
        const gapOf = (events: readonly WatchEvent[]): string[] => events.filter((e) => e.type === 'disconnected' || e.type === 'reconnected').map((e) => `${e.type} ${e.path}`);
        assert.deepEqual(gapOf(heard.shallow), ['disconnected /pos-gap', 'reconnected /pos-gap']);
        assert.deepEqual(gapOf(heard.tree), ['disconnected /pos-gap-tree', 'reconnected /pos-gap-tree']);
        const gap = iterated.filter((line) => !line.endsWith('/meanwhile'));
        assert.deepEqual(gap, ['disconnected /pos-gap-tree', 'reconnected /pos-gap-tree', 'created /pos-gap-tree/after'], 'the iterator has the gap in its place');
        assert.equal(tree.active, false, 'leaving the loop removed the watch');
        await shallow.remove();
      });

      it('a read that relied on an addWatch that failed unsent is sent again, setting a server watch', async () => {
        await zk.admin.create('/pos-resend', 'v0');
        const upstream: Buffer[] = [];
        const stop = proxy.onChunk((event) => {
          if (event.direction === 'upstream') upstream.push(Buffer.from(event.chunk));
        });
        const changed = deferred<WatchEvent>();
        const created = deferred<WatchEvent>();
        let reads: Promise<unknown> | undefined;
        await disconnected(async () => {
          const adding = [proxied.addWatch('/pos-resend', { timeout: 200 }), proxied.addWatch('/pos-resend-missing', { timeout: 200 })];
          reads = Promise.all([proxied.getData('/pos-resend', { watch: changed.resolve }), proxied.exists('/pos-resend-missing', { watch: created.resolve })]);
          for (const add of adding) await assert.rejects(add, { code: 'TIMEOUT' });
        });
        const [, stat] = (await within(reads!, ROUND_TRIPS_MS, 'the reads are answered')) as [unknown, unknown];
        assert.equal(stat, null);
        stop();
        /** A request frame's opcode and path, with the watch flag set: [op][path length][path][1]. */
        const watchedRead = (op: number, path: string): Buffer => Buffer.concat([Buffer.from([0, 0, 0, op, 0, 0, 0, path.length]), Buffer.from(path), Buffer.from([1])]);
        const sent = Buffer.concat(upstream);
        const count = (frame: Buffer): number => {
          let n = 0;
          for (let i = sent.indexOf(frame); i >= 0; i = sent.indexOf(frame, i + 1)) n++;
          return n;
        };
        assert.equal(count(watchedRead(4, '/pos-resend')), 1, 'the getData was sent again with a watch');
        // One exists with a watch re-arms the path as the failed addWatch is cleared; the other is the read sent again.
        assert.equal(count(watchedRead(3, '/pos-resend-missing')), 2, 'the exists was sent again with a watch');
        await zk.admin.setData('/pos-resend', 'v1');
        await zk.admin.create('/pos-resend-missing');
        assert.deepEqual(await within(changed.promise, ROUND_TRIPS_MS, 'the data watch fires'), { type: 'dataChanged', path: '/pos-resend' });
        assert.deepEqual(await within(created.promise, ROUND_TRIPS_MS, 'the exists watch fires'), { type: 'created', path: '/pos-resend-missing' });
      });
    });
  });

  /**
   * A persistent watch's async iterator holds the events its consumer has not asked for yet.
   * Before: without bound, so a consumer slower than the writes grew the client's memory for as
   * long as the watch lived.
   */
  describe('the buffer of a persistent watch iterated by a slow consumer', () => {
    it('holds maxBuffered events, then ends the iteration with WATCH_OVERFLOW after them and removes the watch', async () => {
      await zk.admin.create('/buffer', 'v0');
      const watch = await client.addWatch('/buffer', { maxBuffered: 3 });
      const events = watch[Symbol.asyncIterator]();
      for (let i = 1; i <= 5; i++) await zk.admin.setData('/buffer', `v${i}`);
      // On one server, this sync is answered after the notifications of the writes before it.
      await client.sync('/');

      const taken: WatchEvent[] = [];
      for (let i = 0; i < 3; i++) {
        const next = await events.next();
        assert.equal(next.done, false, 'a buffered event');
        taken.push(next.value);
      }
      assert.deepEqual(taken, Array(3).fill({ type: 'dataChanged', path: '/buffer' }));
      await assert.rejects(events.next(), { name: 'ZooKeeperError', code: 'WATCH_OVERFLOW', op: 'addWatch', path: '/buffer' });
      assert.deepEqual(await events.next(), { value: undefined, done: true });
      assert.equal(watch.active, false, 'the watch was removed');
      await eventually(async () => !(await serverWatches(zk.server, client.sessionId)).includes('/buffer'), ROUND_TRIPS_MS, 'no server watch left');
    });

    it('refuses a maxBuffered that is not a positive integer before sending anything', async () => {
      for (const maxBuffered of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
        await assert.rejects(client.addWatch('/buffer-refused', { maxBuffered }), { code: 'INVALID_ARGUMENT', op: 'addWatch', path: '/buffer-refused' }, String(maxBuffered));
      }
      assert.ok(!(await serverWatches(zk.server, client.sessionId)).includes('/buffer-refused'));
    });
  });
});
