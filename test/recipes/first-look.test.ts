import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LockLostError, Mutex } from '../../src/index.js';
import { ROUND_TRIPS_MS, WAITER_TIMEOUT_MS } from '../support/bounds.js';
import { KINDS, nodesHeld } from './lock-factories.js';
import { RecipeFixture, recordRequests, within } from './fixtures.js';
import { serverWatches } from '../support/server-watches.js';
import { eventually } from '../support/wait.js';

/*
 * Issue 25, item 10: a lease nobody had looked at answered its first look from what it knew at
 * hand-out. Its node was watched only from that look on, so a lease whose node another session
 * had deleted (and whose lock it had taken) still said held, its signal not aborted, until the
 * watch's read came back. A first look must not claim more than the client has heard: once any
 * reply has reached our client from a server state after the deletion, the lease says so.
 */
describe('a lease nobody looked at: its first look knows what the client has heard', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  for (const kind of KINDS) {
    it(`${kind.name}: our node deleted and the lock taken by another session, then any reply to us — the first look says lost`, async () => {
      const path = `/first-look/${kind.name}`;
      const [ours, theirs] = await Promise.all([zk.client(), zk.client()]);
      const lease = await kind.make(ours, path).acquire({ timeout: ROUND_TRIPS_MS });
      // Nobody looks at the lease (no signal, no held) from here on until the assertions.
      for (const node of nodesHeld(lease)) await zk.admin.delete(node);
      const rival = await within(kind.rival(theirs, path).acquire({ timeout: ROUND_TRIPS_MS }), ROUND_TRIPS_MS, 'the rival takes the lock');
      // A round trip of our client on a server that applied the deletion: a watch on our node
      // notifies before any such reply (ZooKeeper orders a client's notifications and replies).
      await ours.sync('/');
      await ours.exists('/');
      assert.equal(lease.held, false, 'held, at the first look');
      assert.equal(lease.signal.aborted, true, 'the signal, at the first look');
      assert.ok(lease.signal.reason instanceof LockLostError);
      await rival.release();
      await lease.release();
    });
  }

  it("a waiter's lease: the watch its node had while waiting is taken over (no read of its own), and tells the deletion", async () => {
    const path = '/first-look/waiter';
    const [holderClient, ours, theirs] = await Promise.all([zk.client(), zk.client(), zk.client()]);
    const holder = await new Mutex(holderClient, path).acquire({ timeout: ROUND_TRIPS_MS });
    const sent = recordRequests(ours);
    const waiting = new Mutex(ours, path).acquire({ timeout: WAITER_TIMEOUT_MS });
    // Our node's watch is on the server before the holder lets go.
    await eventually(async () => (await zk.children(path)).length === 2, ROUND_TRIPS_MS, 'we queued');
    const node = `${path}/${(await zk.children(path)).find((name) => !holder.node.endsWith(name))!}`;
    await eventually(async () => (await serverWatches(zk.server, ours.sessionId)).includes(node), ROUND_TRIPS_MS, 'our node watched');
    await holder.release();
    const lease = await within(waiting, ROUND_TRIPS_MS, 'we hold');
    await zk.admin.delete(lease.node);
    const rival = await within(new Mutex(theirs, path).acquire({ timeout: ROUND_TRIPS_MS }), ROUND_TRIPS_MS, 'the rival takes the lock');
    await ours.sync('/');
    assert.equal(lease.held, false, 'held, at the first look');
    assert.equal(lease.signal.aborted, true, 'the signal, at the first look');
    assert.deepEqual(sent.filter((r) => r === `getData ${lease.node}`), [], 'no read of our own node: the waiting watch was taken over');
    await rival.release();
    await lease.release();
  });
});
