import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Lease } from '../../src/index.js';
import { Mutex, ReadWriteLock, ZooKeeperClient, inspectLock } from '../../src/index.js';
import { FaultProxy, asZooKeeper35 } from '../../src/testing/index.js';
import type { ProxyConnection } from '../../src/testing/index.js';
import { ROUND_TRIPS_MS, WAITER_TIMEOUT_MS } from '../support/bounds.js';
import { eventually } from '../support/wait.js';
import { RecipeFixture, seqOf, within } from './fixtures.js';

const MULTI_READ = 22;

/**
 * Issue 25, item 3: the README promises ZooKeeper 3.5+, but a waiter checked who was left ahead of
 * it with multiRead (3.6+), which 3.5 answers UNIMPLEMENTED before closing the connection: the
 * fourth contender of a queue failed with a raw UNIMPLEMENTED while the lock was free. Played by
 * the proxy (asZooKeeper35: every operation 3.5 lacks refused as 3.5 does).
 */
describe('queue locks on a ZooKeeper 3.5 server (issue 25)', () => {
  let zk: RecipeFixture;
  let proxy: FaultProxy;
  /** Each connection that had a multiRead refused, and how many. */
  const refusals = new Map<ProxyConnection, number>();
  const opened: ZooKeeperClient[] = [];
  before(async () => {
    zk = await RecipeFixture.start();
    const standIn = asZooKeeper35();
    proxy = await FaultProxy.start({
      targetPort: zk.server.port,
      onRequest: (request) => {
        if (request.opcode === MULTI_READ) refusals.set(request.connection, (refusals.get(request.connection) ?? 0) + 1);
        return standIn(request);
      },
    });
  });
  after(async () => {
    await Promise.all(opened.map((client) => client.close()));
    await zk?.close();
    await proxy?.close();
  });

  /** `n` clients talking to the "3.5 server" only, each on its own connection. */
  async function clients(n: number): Promise<ZooKeeperClient[]> {
    const made: ZooKeeperClient[] = [];
    for (let i = 0; i < n; i++) {
      const client = await ZooKeeperClient.connect(proxy.connectString, { sessionTimeout: 10_000 });
      opened.push(client);
      made.push(client);
    }
    return made;
  }

  /** Waits until `path` has `count` contender nodes (asked of the server, not of the locks). */
  async function queued(path: string, count: number): Promise<void> {
    await eventually(async () => (await zk.children(path)).length === count, ROUND_TRIPS_MS, `${count} contenders queued under ${path}`);
  }

  it('five Mutex contenders queued one behind the other all get the lock, in turn; each client asks multiRead of the server at most once', async () => {
    const path = '/zk35/mutex';
    const all = await clients(5);
    const order: number[] = [];
    const holder = await new Mutex(all[0]!, path).acquire({ timeout: ROUND_TRIPS_MS });
    const waiting: Promise<void>[] = [];
    for (let i = 1; i < all.length; i++) {
      waiting.push(
        new Mutex(all[i]!, path).acquire({ timeout: WAITER_TIMEOUT_MS }).then(async (lease) => {
          order.push(i);
          const seqs = (await zk.children(path)).map((name) => seqOf(`${path}/${name}`));
          assert.equal(Math.min(...seqs), seqOf(lease.node), `waiter ${i} holds first in the queue, as the server lists it`);
          await lease.release();
        }),
      );
      // One behind the other: each later waiter has every earlier one ahead of it.
      await queued(path, i + 1);
    }
    await holder.release();
    await within(Promise.all(waiting), WAITER_TIMEOUT_MS, 'every waiter acquires');
    assert.deepEqual(order, [1, 2, 3, 4], 'in queue order');
    assert.ok(refusals.size > 0, 'a waiter asked for multiRead and was refused');
    assert.ok([...refusals.values()].every((n) => n === 1), `each connection refused once: ${[...refusals.values()].join(', ')}`);
    assert.ok(refusals.size <= all.length, `at most one refusal per client, got ${refusals.size}`);
    await zk.assertNoNodes(path);
  });

  it('readers behind two writers, and inspection, work without multiRead', async () => {
    const path = '/zk35/rw';
    const [w1, w2, r1, r2, r3] = await clients(5);
    const first = await new ReadWriteLock(w1!, path).writeLock.acquire({ timeout: ROUND_TRIPS_MS });
    const second = new ReadWriteLock(w2!, path).writeLock.acquire({ timeout: WAITER_TIMEOUT_MS });
    await queued(path, 2);
    const readers: Promise<Lease>[] = [];
    for (const [i, client] of [r1!, r2!, r3!].entries()) {
      readers.push(new ReadWriteLock(client, path).readLock.acquire({ timeout: WAITER_TIMEOUT_MS }));
      await queued(path, 3 + i);
    }
    const state = await inspectLock(r1!, path);
    assert.deepEqual([state.holders.length, state.waiters.length], [1, 4], 'one holder, four waiters');
    await first.release();
    const writer = await within(second, ROUND_TRIPS_MS, 'the second writer acquires');
    await writer.release();
    const leases = await within(Promise.all(readers), ROUND_TRIPS_MS, 'the three readers acquire together');
    assert.ok(leases.every((lease) => lease.held));
    await Promise.all(leases.map((lease) => lease.release()));
    await zk.assertNoNodes(path);
  });
});
