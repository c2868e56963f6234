import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Lease , LockError} from '../../src/index.js';
import { LockLostError, Mutex, NonReentrantMutex, ZooKeeperClient, ZooKeeperError, inspectLock } from '../../src/index.js';
import { ROUND_TRIPS_MS, WAITER_TIMEOUT_MS } from '../support/bounds.js';
import { serverWatches } from '../support/server-watches.js';
import { eventually } from '../support/wait.js';
import { countListings, isLockError, RecipeFixture, recordRequests, recordWatchEvents, seqOf, sleep, within } from './fixtures.js';

/**
 * A Stat does not tell a container from a persistent node (the server reports ephemeralOwner 0
 * for both), so containers are recognised by what they do: the server reaps them once empty.
 * Its reaper runs every minute by default; every 200 ms here.
 */
const REAPING = { jvmArgs: ['-Dznode.container.checkIntervalMs=200'] };

describe('fair mutex', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start(REAPING);
  });
  after(async () => {
    await zk?.close();
  });

  it('creates a missing lock path as containers that the server reaps when idle, and works again after the path went', async () => {
    await zk.admin.ensurePath('/m/persistent');
    const client = await zk.client();
    const mutex = new Mutex(client, '/m/persistent/containers/lock');
    // tryAcquire on a path that does not exist yet: creating the parents takes round trips, and the lock is free.
    const lease = await mutex.tryAcquire();
    assert.ok(lease, 'a free lock on a fresh path is acquired by tryAcquire');
    await lease.release();
    await eventually(async () => (await zk.admin.exists('/m/persistent/containers')) === null, ROUND_TRIPS_MS, 'idle lock path and its parent reaped');
    assert.ok(await zk.admin.exists('/m/persistent'), 'an existing persistent parent is left alone');
    const again = await mutex.acquire({ timeout: ROUND_TRIPS_MS });
    assert.ok(again.held, 'acquired after the lock path was reaped');
    await again.release();
    // An admin deleting the idle path between two acquisitions, faster than the reaper.
    await zk.admin.delete('/m/persistent/containers/lock').catch(() => undefined);
    const third = await mutex.acquire({ timeout: ROUND_TRIPS_MS });
    await third.release();
    await zk.assertNoNodes('/m/persistent/containers/lock');
  });

  it('re-acquires an uncontended lock with the create alone: the sequence proves nobody queued since our release', async () => {
    // Persistent: this file's fast reaper would take an idle container between two acquisitions
    // on a slow machine, and a re-created path rightly proves nothing (the next test's case).
    await zk.admin.ensurePath('/m/solo');
    const client = await zk.client();
    const listed = countListings(client);
    const mutex = new Mutex(client, '/m/solo');
    const tokens: bigint[] = [];
    const listings: number[] = [];
    for (let i = 0; i < 5; i++) {
      const lease = await mutex.acquire({ timeout: ROUND_TRIPS_MS });
      tokens.push(lease.fencingToken);
      listings.push(listed.length);
      await lease.release();
    }
    assert.ok(listings[0]! > 0, 'the first acquisition lists the queue');
    assert.deepEqual(listings.slice(1), [1, 2, 3, 4].map(() => listings[0]), 'the next ones do not');
    assert.deepEqual([...tokens].sort((x, y) => (x < y ? -1 : 1)), tokens, 'fencing tokens still grow');
    await zk.assertNoNodes('/m/solo');
  });

  it('a re-acquire waits when another contender queued since our release', async () => {
    const [a, b] = [await zk.client(), await zk.client()];
    const mine = new Mutex(a, '/m/interleaved');
    await (await mine.acquire()).release();
    const theirs = await new Mutex(b, '/m/interleaved').acquire();
    await assert.rejects(mine.acquire({ timeout: 300 }), isLockError('LOCK_TIMEOUT'));
    const next = mine.acquire({ timeout: ROUND_TRIPS_MS });
    await sleep(100);
    assert.ok(theirs.held);
    await theirs.release();
    await (await next).release();
    await zk.assertNoNodes('/m/interleaved');
  });

  it('a re-acquire waits when the lock path was re-created and refilled up to our next sequence meanwhile', async () => {
    const [a, b] = [await zk.client(), await zk.client()];
    const mine = new Mutex(a, '/m/reborn/lock');
    const first = await mine.acquire();
    assert.match(first.node, /-lock-0000000000$/);
    await first.release();
    // What the container reaper does to an empty lock path, and another service queueing there first.
    // The reaper (every 200 ms here) may have done it already: either way the path went.
    await zk.admin.delete('/m/reborn/lock').catch((error: unknown) => {
      if (!(error instanceof ZooKeeperError && error.code === 'NONODE')) throw error;
    });
    // The server's container reaper may take the emptied parent /m/reborn meanwhile: ensurePath makes it again if so.
    await zk.admin.ensurePath('/m/reborn/lock', { container: true });
    const theirs = await new Mutex(b, '/m/reborn/lock').acquire();
    assert.match(theirs.node, /-lock-0000000000$/);
    // Our next node is -0000000001, the sequence after our last one: only the zxids tell the parents apart.
    await assert.rejects(mine.acquire({ timeout: 300 }), isLockError('LOCK_TIMEOUT'));
    assert.deepEqual(await zk.children('/m/reborn/lock'), [theirs.node.slice('/m/reborn/lock/'.length)]);
    await theirs.release();
    await (await mine.acquire({ timeout: ROUND_TRIPS_MS })).release();
    await zk.assertNoNodes('/m/reborn/lock');
  });

  it('one client holds 30 leases at once without an EventEmitter leak warning, and each still learns of its loss', async () => {
    const client = await ZooKeeperClient.connect(zk.server.connectString, { sessionTimeout: 10_000 });
    // Counts the recipes' state subscriptions that are live.
    let subscribed = 0;
    const onState = client.onState.bind(client);
    client.onState = (listener) => {
      const unsubscribe = onState(listener);
      subscribed++;
      let live = true;
      return () => {
        if (live) subscribed--;
        live = false;
        unsubscribe();
      };
    };
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const leases = await Promise.all(Array.from({ length: 30 }, (_, i) => new Mutex(client, `/m/many/${i}`).acquire({ timeout: ROUND_TRIPS_MS })));
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(warnings, []);
      await zk.admin.delete(leases[7]!.node);
      await eventually(() => leases[7]!.signal.aborted, ROUND_TRIPS_MS, 'the lease whose node went is lost');
      assert.equal(leases.filter((l) => l.signal.aborted).length, 1);
      assert.equal(client.listenerCount('state'), 0, 'the leases follow the session through onState, not the state event');
      // The leases follow the session through one subscription of their client (session-liveness.ts), not one each.
      assert.equal(subscribed, 1, `one subscription for the 29 leases not lost (${subscribed})`);
      // Every lease hears the session end through its subscription.
      await client.close();
      assert.deepEqual(
        leases.map((l) => (l.signal.reason as { reason?: string }).reason),
        leases.map((_, i) => (i === 7 ? 'NODE_DELETED' : 'CLOSED')),
      );
      assert.equal(subscribed, 0, 'nothing left listening');
    } finally {
      process.off('warning', onWarning);
      await client.close();
    }
  });

  it('tryAcquire returns null while the lock is held and leaves no node', async () => {
    const [a, b] = [await zk.client(), await zk.client()];
    const held = await new Mutex(a, '/m/try').acquire();
    assert.equal(await new Mutex(b, '/m/try').tryAcquire(), null);
    assert.deepEqual(await zk.children('/m/try'), [held.node.slice('/m/try/'.length)], 'only the holder node');
    await held.release();
    const lease = await new Mutex(b, '/m/try').tryAcquire();
    assert.ok(lease, 'free again: tryAcquire gets it');
    await lease.release();
    await zk.assertNoNodes('/m/try');
  });

  it('acquire({ timeout }) rejects with LOCK_TIMEOUT after the whole timeout and removes its node', async () => {
    const [a, b] = [await zk.client(), await zk.client()];
    const held = await new Mutex(a, '/m/timeout').acquire();
    const started = performance.now();
    await assert.rejects(within(new Mutex(b, '/m/timeout').acquire({ timeout: 300 }), ROUND_TRIPS_MS, 'acquire times out'), isLockError('LOCK_TIMEOUT'));
    const waited = performance.now() - started;
    assert.ok(waited >= 290, `waited ${waited} ms for a 300 ms timeout`);
    assert.equal((await zk.children('/m/timeout')).length, 1, 'the waiter removed its node before rejecting');
    await held.release();
    await zk.assertNoNodes('/m/timeout');
  });

  it('acquire({ signal }) rejects with ABORTED when the signal aborts while waiting, or at once if it already had, and removes its node', async () => {
    const [a, b] = [await zk.client(), await zk.client()];
    const held = await new Mutex(a, '/m/abort').acquire();
    const controller = new AbortController();
    const waiting = new Mutex(b, '/m/abort').acquire({ signal: controller.signal });
    await eventually(async () => (await zk.children('/m/abort')).length === 2, ROUND_TRIPS_MS, 'waiter queued');
    const cause = new Error('caller gave up');
    controller.abort(cause);
    await assert.rejects(waiting, (e) => isLockError('ABORTED')(e) && (e as LockError).cause === cause);
    assert.equal((await zk.children('/m/abort')).length, 1, 'the waiter removed its node before rejecting');
    await assert.rejects(new Mutex(b, '/m/abort').acquire({ signal: AbortSignal.abort() }), isLockError('ABORTED'));
    assert.equal((await zk.children('/m/abort')).length, 1, 'an already aborted acquire creates nothing');
    await held.release();
    await zk.assertNoNodes('/m/abort');
  });

  it('rejects a negative or NaN timeout with INVALID_ARGUMENT before sending anything', async () => {
    const client = await zk.client();
    const zxid = client.lastZxid;
    for (const timeout of [-1, Number.NaN]) {
      await assert.rejects(new Mutex(client, '/m/invalid').acquire({ timeout }), isLockError('INVALID_ARGUMENT'));
    }
    // Infinity is refused too, saying how to wait without a bound (it read as "must be more than 0").
    await assert.rejects(new Mutex(client, '/m/invalid').acquire({ timeout: Infinity }), (error) => isLockError('INVALID_ARGUMENT')(error) && /finite.*leave it out/.test((error as Error).message));
    assert.equal(client.lastZxid, zxid, 'no request reached the server');
    assert.equal(await zk.admin.exists('/m/invalid'), null);
  });

  it('a lease: await using releases it, release twice is ALREADY_RELEASED, release after close is CLOSED, its signal says RELEASED', async () => {
    const client = await zk.client();
    const mutex = new Mutex(client, '/m/lease');
    let node: string;
    {
      await using lease = await mutex.acquire();
      node = lease.node;
      assert.ok(await zk.admin.exists(node));
    }
    assert.equal(await zk.admin.exists(node), null, 'await using released the lease');

    const lease = await mutex.acquire();
    await lease.release();
    assert.equal(lease.held, false);
    assert.ok(lease.signal.aborted && lease.signal.reason instanceof LockLostError && lease.signal.reason.reason === 'RELEASED');
    await assert.rejects(lease.release(), isLockError('ALREADY_RELEASED'));

    const other = await zk.client();
    const orphan = await new Mutex(other, '/m/lease').acquire();
    await other.close();
    assert.equal(orphan.signal.reason instanceof LockLostError && orphan.signal.reason.reason, 'CLOSED');
    await assert.rejects(orphan.release(), (e) => e instanceof ZooKeeperError && e.code === 'CLOSED');
    await zk.assertNoNodes('/m/lease');
  });

  it('lease.guard commits only while our node exists; an admin deleting it aborts the signal with NODE_DELETED', async () => {
    const client = await zk.client();
    await zk.admin.ensurePath('/m/guarded-state');
    const lease = await new Mutex(client, '/m/guard').acquire();
    const results = await lease.guard([{ op: 'setData', path: '/m/guarded-state', data: 'v1' }]);
    assert.equal(results.length, 1, 'only the caller ops results');
    assert.equal((await zk.admin.getData('/m/guarded-state')).data.toString(), 'v1');

    await zk.admin.delete(lease.node);
    await eventually(() => lease.signal.aborted, ROUND_TRIPS_MS, 'lease signal aborted');
    const reason = lease.signal.reason as LockLostError;
    assert.ok(reason instanceof LockLostError && reason.reason === 'NODE_DELETED', String(reason));
    assert.equal(lease.held, false);
    await assert.rejects(lease.guard([{ op: 'setData', path: '/m/guarded-state', data: 'v2' }]), isLockError('NOT_HELD'));
    assert.equal((await zk.admin.getData('/m/guarded-state')).data.toString(), 'v1', 'nothing written');
    await lease.release();
    await zk.assertNoNodes('/m/guard');
  });

  it('guard fails with NOT_HELD, writing nothing, when the node went before the monitor noticed', async () => {
    const client = await zk.client();
    await zk.admin.ensurePath('/m/guarded-state-2');
    const lease = await new Mutex(client, '/m/guard2').acquire();
    // Sent by another session and not awaited-for by ours: our check runs against a deleted node.
    await zk.admin.delete(lease.node);
    await assert.rejects(lease.guard([{ op: 'setData', path: '/m/guarded-state-2', data: 'late' }]), isLockError('NOT_HELD'));
    assert.equal((await zk.admin.getData('/m/guarded-state-2')).data.length, 0);
  });

  it('Mutex.runExclusive re-enters in the same async chain with one node; an unrelated task queues; acquire inside is WOULD_DEADLOCK', async () => {
    const client = await zk.client();
    const mutex = new Mutex(client, '/m/reentrant');
    const order: string[] = [];
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const outer = mutex.runExclusive(async (outerLease) => {
      order.push('outer');
      await mutex.runExclusive(async (inner) => {
        assert.equal(inner, outerLease, 'the nested call re-enters the same lease');
        assert.equal((await zk.children('/m/reentrant')).length, 1, 'one node for both levels');
        order.push('inner');
      });
      assert.ok(outerLease.held, 'leaving the nested call keeps the lock');
      await assert.rejects(mutex.acquire(), isLockError('WOULD_DEADLOCK'));
      await gate;
      order.push('outer-end');
    });
    await eventually(() => order.includes('inner'), ROUND_TRIPS_MS, 'nested call ran');
    // Started from the test body, outside the holder's call chain: it must queue like anyone else.
    let unrelatedRan = false;
    const unrelated = mutex.runExclusive(() => {
      unrelatedRan = true;
      order.push('unrelated');
    });
    await eventually(async () => (await zk.children('/m/reentrant')).length === 2, ROUND_TRIPS_MS, 'unrelated task queued with its own node');
    await sleep(200);
    assert.equal(unrelatedRan, false, 'the unrelated task waits for the holder');
    open();
    await within(Promise.all([outer, unrelated]), ROUND_TRIPS_MS, 'both done');
    assert.deepEqual(order, ['outer', 'inner', 'outer-end', 'unrelated']);
    await zk.assertNoNodes('/m/reentrant');
  });

  it('NonReentrantMutex nested in its own runExclusive fails at once with WOULD_DEADLOCK', async () => {
    const client = await zk.client();
    const mutex = new NonReentrantMutex(client, '/m/non-reentrant');
    await mutex.runExclusive(async () => {
      // A nested call that queued instead would wait for ever: bounded, and no second node.
      await assert.rejects(within(mutex.runExclusive(() => undefined), ROUND_TRIPS_MS, 'nested runExclusive'), isLockError('WOULD_DEADLOCK'));
      await assert.rejects(within(mutex.tryAcquire(), ROUND_TRIPS_MS, 'nested tryAcquire'), isLockError('WOULD_DEADLOCK'));
      assert.equal((await zk.children('/m/non-reentrant')).length, 1, 'no second node');
    });
    await zk.assertNoNodes('/m/non-reentrant');
  });

  it('a write into the holder\'s or a waiter\'s node (Curator\'s revoke, a tool) wakes the waiters behind, who look again and keep waiting', async () => {
    // A handoff that trusted a dataChanged event as "the node ahead released" gave two holders here.
    const [holderClient, firstClient, secondClient] = [await zk.client(), await zk.client(), await zk.client()];
    const holder = await new Mutex(holderClient, '/m/written').acquire({ timeout: ROUND_TRIPS_MS });
    const first = new Mutex(firstClient, '/m/written').acquire({ timeout: WAITER_TIMEOUT_MS });
    await eventually(async () => (await zk.admin.getChildren('/m/written')).children.length === 2, ROUND_TRIPS_MS, 'the first waiter queued');
    const second = new Mutex(secondClient, '/m/written').acquire({ timeout: WAITER_TIMEOUT_MS });
    await eventually(async () => (await zk.admin.getChildren('/m/written')).children.length === 3, ROUND_TRIPS_MS, 'the second waiter queued');
    let held = 0;
    void first.then(() => held++);
    void second.then(() => held++);
    // The holder's node (which the first waiter watches) and the first waiter's (which the second watches).
    const [waiting] = (await inspectLock(zk.admin, '/m/written')).waiters;
    assert.ok(waiting);
    await zk.admin.setData(holder.node, Buffer.from('__REVOKE__'));
    await zk.admin.setData(waiting.path, Buffer.from('__REVOKE__'));
    // Long enough for each woken waiter to look again, many times over.
    await sleep(1_000);
    assert.equal(held, 0, 'nobody holds beside the holder');
    await holder.release();
    const lease = await within(first, ROUND_TRIPS_MS, 'the first waiter holds after the release');
    await sleep(300);
    assert.equal(held, 1, 'the second still waits behind the first');
    await lease.release();
    await (await within(second, ROUND_TRIPS_MS, 'the second holds after the first')).release();
  });

  it('down a queue of five, every waiter holds with no request once the one before it releases: it followed the queue ahead while it waited', async () => {
    const path = '/m/lookahead';
    const clients = await Promise.all(Array.from({ length: 5 }, () => zk.client()));
    // A first lock starts each client's heartbeat, so no lease below needs a request to prove its session fresh.
    for (const client of clients) await (await new Mutex(client, '/m/lookahead-warm').acquire({ timeout: ROUND_TRIPS_MS })).release();
    const sent = clients.map((client) => recordRequests(client));
    const leases: Lease[] = [await new Mutex(clients[0]!, path).acquire({ timeout: ROUND_TRIPS_MS })];
    // What each waiter was woken by: the notifications its session got, its own node's deletion (its release) apart.
    const watched = clients.map((client) => recordWatchEvents([client], path));
    const wakes = watched.map(({ events }, i) => () => events.filter((event) => event.path !== leases[i]?.node).length);
    const waiting: Promise<Lease>[] = [];
    for (let i = 1; i < 5; i++) {
      waiting.push(new Mutex(clients[i]!, path).acquire({ timeout: WAITER_TIMEOUT_MS }));
      await eventually(async () => (await zk.children(path)).length === i + 1, ROUND_TRIPS_MS, `waiter ${i} queued`);
    }
    // Every waiter's watches (the node ahead, and for a lookahead the node two ahead) are on the
    // server before the first release: a watch asked for once its node is gone reads it gone with
    // no event, and the wake-ups awaited below would never come (a busy machine can take that long).
    const queue = (await zk.children(path)).map((name) => `${path}/${name}`).sort((a, b) => seqOf(a) - seqOf(b));
    await eventually(
      async () => {
        for (let i = 1; i < 5; i++) {
          const watched = await serverWatches(zk.server, clients[i]!.sessionId);
          if (!watched.includes(queue[i - 1]!) || (i >= 2 && !watched.includes(queue[i - 2]!))) return false;
        }
        return true;
      },
      ROUND_TRIPS_MS,
      'every waiter watches the node ahead of it and the one two ahead',
    );
    const afterRelease: string[][] = [];
    for (let i = 1; i < 5; i++) {
      // Waiter i heard of the deletion of the node two ahead (its lookahead), and sent what it
      // sends then, before the node right ahead of it goes.
      if (i >= 2) await eventually(() => wakes[i]!() >= 1, ROUND_TRIPS_MS, `waiter ${i} followed the node two ahead`);
      const mark = sent[i]!.length;
      await leases[i - 1]!.release();
      leases.push(await within(waiting[i - 1]!, ROUND_TRIPS_MS, `waiter ${i} holds`));
      afterRelease.push(sent[i]!.slice(mark));
      const { children } = await zk.admin.getChildren(path);
      assert.ok(children.every((name) => leases[i]!.node.endsWith(name) || seqOf(`${path}/${name}`) > seqOf(leases[i]!.node)), 'the holder is the first node');
    }
    assert.deepEqual(afterRelease, [[], [], [], []], 'no request between the release and the next holder');
    const counts = wakes.map((count) => count());
    for (const { stop } of watched) stop();
    assert.ok(counts.every((n) => n <= 2), `watch events per waiter: ${counts.join(',')}`);
    await leases.at(-1)!.release();
    await zk.assertNoNodes(path);
  });

  it('a waiter following the queue ahead keeps waiting when those ahead of it leave out of order while the holder holds', async () => {
    const path = '/m/lookahead-out-of-order';
    const [holderClient, ...waiterClients] = await Promise.all(Array.from({ length: 4 }, () => zk.client()));
    const holder = await new Mutex(holderClient!, path).acquire({ timeout: ROUND_TRIPS_MS });
    const leave = waiterClients.slice(0, 2).map(() => new AbortController());
    const leaving = leave.map((controller, i) => new Mutex(waiterClients[i]!, path).acquire({ signal: controller.signal }).catch((error: unknown) => error));
    await eventually(async () => (await zk.children(path)).length === 3, ROUND_TRIPS_MS, 'two waiters queued');
    // The last follows the first waiter and the holder while it waits for the second waiter.
    let held = false;
    const { events, stop } = recordWatchEvents([waiterClients[2]!], path);
    const last = new Mutex(waiterClients[2]!, path).acquire({ timeout: WAITER_TIMEOUT_MS });
    void last.then(() => (held = true));
    await eventually(async () => (await zk.children(path)).length === 4, ROUND_TRIPS_MS, 'the last waiter queued');
    // Both of its watches must be on the server before anyone leaves: a node already gone when the
    // watch is asked for is read as gone, with no event to count (a busy machine can take longer
    // than the pause between the leavers to get there).
    const [, first, second] = (await zk.children(path)).map((name) => `${path}/${name}`).sort((a, b) => seqOf(a) - seqOf(b));
    await eventually(
      async () => {
        const watched = await serverWatches(zk.server, waiterClients[2]!.sessionId);
        return watched.includes(first!) && watched.includes(second!);
      },
      ROUND_TRIPS_MS,
      'the last waiter watches both waiters ahead of it',
    );
    for (const controller of leave) {
      controller.abort();
      await sleep(300);
    }
    for (const outcome of await Promise.all(leaving)) assert.ok(isLockError('ABORTED')(outcome));
    // It heard of both (the first by its lookahead, the second as its nearest) and looked again.
    await eventually(() => events.length >= 2, ROUND_TRIPS_MS, 'the last waiter heard both leave');
    stop();
    await sleep(300);
    assert.equal(held, false, 'the last waiter still waits');
    assert.ok(await zk.admin.exists(holder.node), 'while the holder holds');
    await holder.release();
    await (await within(last, ROUND_TRIPS_MS, 'the last waiter holds after the holder')).release();
    await zk.assertNoNodes(path);
  });

  it('inspectLock lists the holder and the waiters in queue order with their owner data', async () => {
    const clients = [await zk.client(), await zk.client(), await zk.client()];
    const holder = await new Mutex(clients[0]!, '/m/inspect', { ownerId: 'holder' }).acquire();
    const waiters = [
      new Mutex(clients[1]!, '/m/inspect', { ownerId: 'waiter-1' }).acquire({ timeout: WAITER_TIMEOUT_MS }),
    ];
    await eventually(async () => (await zk.children('/m/inspect')).length === 2, ROUND_TRIPS_MS, 'first waiter queued');
    waiters.push(new Mutex(clients[2]!, '/m/inspect', { ownerId: 'waiter-2' }).acquire({ timeout: WAITER_TIMEOUT_MS }));
    await eventually(async () => (await zk.children('/m/inspect')).length === 3, ROUND_TRIPS_MS, 'second waiter queued');
    const state = await inspectLock(zk.admin, '/m/inspect');
    assert.deepEqual(state.holders.map((h) => h.owner.id), ['holder']);
    assert.deepEqual(state.waiters.map((w) => w.owner.id), ['waiter-1', 'waiter-2']);
    assert.equal(state.holders[0]!.path, holder.node);
    assert.equal(state.holders[0]!.fencingToken, holder.fencingToken);
    assert.equal(state.holders[0]!.sessionId, clients[0]!.sessionId);
    const owner = state.holders[0]!.owner;
    assert.ok('pid' in owner && owner.pid === process.pid, 'owner data carries the pid');
    assert.ok(state.waiters[0]!.seq < state.waiters[1]!.seq);
    await holder.release();
    const leases: Lease[] = [];
    for (const waiter of waiters) {
      const lease = await within(waiter, ROUND_TRIPS_MS, 'waiter acquired');
      leases.push(lease);
      await lease.release();
    }
    await zk.assertNoNodes('/m/inspect');
  });
});
