import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import type { Lease, ZooKeeperClient } from '../../src/index.js';
import { Semaphore } from '../../src/index.js';
import { ROUND_TRIPS_MS, WAITER_TIMEOUT_MS } from '../support/bounds.js';
import { loseReplyTo } from '../support/lose-reply.js';
import { eventually } from '../support/wait.js';
import { RecipeFixture, recordRequests, recordWatchEvents, track, within } from './fixtures.js';

/**
 * What a semaphore's turn costs the server, in counts that do not depend on load: the requests of
 * the queue's head (its own, not the queue lock's: those under `locks/` are the queue's business)
 * and the watch events a release sends. Counted at the client (zklock:client:request and
 * zklock:client:watch), every step awaited on the server's own word (wchp), never on time.
 */
describe('Semaphore: requests per turn and watch events per release', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  const hex = (client: ZooKeeperClient): string => `0x${client.sessionId.toString(16)}`;
  /**
   * Until the heartbeat's proof that the session lives reaches well past the leases' safety
   * margin (a tenth of the timeout), an acquire proves it itself, with a sync and a setACL (see
   * proveFresh): waited out first, so that the counts are those of every later turn.
   */
  const proofStands = (client: ZooKeeperClient): Promise<void> =>
    eventually(() => client.sessionAliveUntil() - performance.now() > client.sessionTimeout / 4, ROUND_TRIPS_MS, 'the heartbeat proves the session alive');
  /** The head's requests that are the semaphore's own: those on the path, under `leases/`, and the transaction. */
  const semaphoreOwn = (sent: readonly string[], path: string): string[] => sent.filter((request) => !request.startsWith('getChildren ' + path + '/locks') && !request.includes(`${path}/locks/`));

  it('a head that waits: a release wakes it alone, and its turn sends one transaction and one read of its lease, no count (and the release one delete)', async () => {
    const path = '/traffic/waiting-head';
    const [first, second, head, ...queued] = await Promise.all(Array.from({ length: 6 }, () => zk.client()));
    const all = [first!, second!, head!, ...queued];
    const holders: Lease[] = [];
    for (const client of [first!, second!]) holders.push(await new Semaphore(client, path, 2).acquire());
    await (await new Semaphore(head!, `${path}-first`, 1).acquire()).release(); // the head's first lock starts its heartbeat
    await proofStands(head!);
    const sent = recordRequests(head!);
    const waiting = track(new Semaphore(head!, path, 2).acquire({ timeout: WAITER_TIMEOUT_MS }));
    // The server's word that the head waits, watching leases/ (checkWatches; wchp and wchc list no child watches).
    const watching = (): Promise<boolean> => head!.checkWatches(`${path}/leases`, 'children').then(() => true, () => false);
    await eventually(watching, ROUND_TRIPS_MS, 'the head watches leases/');
    const behind = queued.map((client) => track(new Semaphore(client, path, 2).acquire({ timeout: WAITER_TIMEOUT_MS })));
    await eventually(async () => (await zk.children(`${path}/locks`)).length === 1 + queued.length, ROUND_TRIPS_MS, 'the others queue behind the head');
    assert.deepEqual(semaphoreOwn(sent, path), [`getData ${path}`, `getChildren ${path}/leases`, `getChildren ${path}/leases`], 'counted unwatched, then again watched once it found no slot');
    assert.equal(waiting.settled, false);

    sent.length = 0;
    const woken = recordWatchEvents(all, path);
    await holders[0]!.release();
    const lease = await within(waiting.promise, ROUND_TRIPS_MS, 'the head takes the freed slot');
    woken.stop();
    // Of leases/ and its children (the queue's own events, under locks/, are the queue's business), to others than the releaser.
    const others = woken.events.filter((event) => event.path.startsWith(`${path}/leases`) && event.sessionId !== hex(first!));
    assert.deepEqual(others.map((event) => [event.sessionId, event.type]), [[hex(head!), 'childrenChanged']], 'one watch event for the release, to the head alone: no herd');
    // No removal of a watch, no create and delete in turn, no read of the lease at hand-out beyond the one that gives its Stat and watch.
    const leaseNode = lease.node;
    assert.deepEqual(semaphoreOwn(sent, path), ['multi', `exists ${leaseNode}`], 'the woken head: one transaction, one read (a change while it heads the queue is a holder gone)');
    assert.equal(lease.fencingToken, (await zk.admin.exists(leaseNode))?.czxid, 'the fencing token is the lease node\'s czxid, read after the transaction');
    assert.ok(!lease.signal.aborted && lease.held);

    // Its queue node went in the same transaction: the next in the queue heads now, and its count sees our lease.
    assert.equal((await zk.children(`${path}/leases`)).length, 2);
    sent.length = 0;
    await lease.release();
    assert.deepEqual(sent, [`delete ${leaseNode}`], 'the release: one delete');
    for (const held of holders.slice(1)) await held.release();
    // Each releases once it holds (in queue order, which is not the array's).
    await Promise.all(behind.map(async (waiter) => (await within(waiter.promise, WAITER_TIMEOUT_MS, 'every waiter in turn')).release()));
    await zk.assertNoNodes(`${path}/leases`);
    await zk.assertNoNodes(`${path}/locks`);
  });

  it('a transaction whose reply is lost (it ran) leaves no lease behind: the head gives up what it made and queues again, and ends with one lease', async () => {
    const path = '/traffic/lost-reply';
    const { client, proxy } = await zk.viaProxy({ sessionTimeout: 10_000 });
    const semaphore = new Semaphore(client, path, 2);
    await (await semaphore.acquire()).release(); // the paths and the limit exist
    const created: string[] = [];
    const watch = await zk.admin.addWatch(`${path}/leases`, { recursive: true });
    watch.on((event) => void (event.type === 'created' && created.push(event.path)));
    // The transaction is the first request whose bytes name a lease node ('-lease-'): its reply is lost, the connection reset.
    const lost = loseReplyTo(proxy, '-lease-');
    const lease = await within(semaphore.acquire({ timeout: WAITER_TIMEOUT_MS }), WAITER_TIMEOUT_MS, 'acquired after the lost reply');
    await lost;
    assert.equal(created.length, 2, `the transaction's lease, then the lease of the next turn: ${created.join(', ')}`);
    assert.notEqual(created[0], lease.node, 'the lease of the lost reply was given up');
    await eventually(async () => (await zk.children(`${path}/leases`)).length === 1, ROUND_TRIPS_MS, 'the given-up lease is deleted');
    assert.deepEqual(await zk.children(`${path}/leases`), [lease.node.slice(lease.node.lastIndexOf('/') + 1)]);
    await lease.release();
    await watch.remove();
    await zk.assertNoNodes(`${path}/leases`);
    await zk.assertNoNodes(`${path}/locks`);
  });

  it('a head that finds a slot free: a count (with the limit check), one transaction, one read of its lease; no watch set or removed', async () => {
    const path = '/traffic/free-slot';
    const client = await zk.client();
    const semaphore = new Semaphore(client, path, 2);
    await (await semaphore.acquire()).release(); // the paths and the limit exist
    await proofStands(client);
    const sent = recordRequests(client);
    const lease = await semaphore.acquire();
    assert.deepEqual(semaphoreOwn(sent, path), [`getData ${path}`, `getChildren ${path}/leases`, 'multi', `exists ${lease.node}`]);
    await lease.release();
  });
});
