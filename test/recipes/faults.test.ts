import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Lease, ZooKeeperClient } from '../../src/index.js';
import { LockError, LockLostError, Mutex, ReadWriteLock, SimpleLock, ZooKeeperClient as Client } from '../../src/index.js';
import { ROUND_TRIPS_MS, sessionBound } from '../support/bounds.js';
import { eventually, nextEvent } from '../support/wait.js';
import { RecipeFixture, within } from './fixtures.js';
import { loseReplyTo } from '../support/lose-reply.js';
import { FaultProxy } from '../../src/testing/index.js';

describe('lock recipes under connection faults and session expiry', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  it('a create whose reply was lost is adopted after the reconnect: one node, owned by our session, and the lock works', async () => {
    await zk.admin.ensurePath('/f/adopt');
    const holder = await new Mutex(await zk.client(), '/f/adopt').acquire();
    const { client, proxy } = await zk.viaProxy({ sessionTimeout: 6000 });
    const session = client.sessionId;
    const reconnected = nextEvent(client, 'reconnected', sessionBound(client.sessionTimeout));
    const waiting = new Mutex(client, '/f/adopt').acquire({ timeout: sessionBound(client.sessionTimeout) + 2 * ROUND_TRIPS_MS });
    await loseReplyTo(proxy, '-lock-');
    await reconnected;
    assert.equal(client.sessionId, session, 'same session after the reconnect');
    await eventually(async () => (await client.getEphemerals('/f/adopt')).length >= 1, ROUND_TRIPS_MS, 'our node exists');
    // Give a wrong second create the time to show up.
    await new Promise((r) => setTimeout(r, 300));
    const ours = await client.getEphemerals('/f/adopt');
    assert.equal(ours.length, 1, `exactly one contender node of ours: ${ours.join(', ')}`);
    assert.equal((await zk.admin.exists(ours[0]!))?.ephemeralOwner, session);
    await holder.release();
    const lease = await within(waiting, ROUND_TRIPS_MS, 'adopted waiter acquires');
    assert.equal(lease.node, ours[0], 'the lease is on the adopted node');
    assert.ok(lease.held);
    await lease.release();
    await zk.assertNoNodes('/f/adopt');
  });

  it('an acquire timing out while disconnected rejects on time and leaves no node, sent or not', async () => {
    await zk.admin.ensurePath('/f/offline');
    const holder = await new Mutex(await zk.client(), '/f/offline').acquire();
    // A long session, so that "on time" has room to mean "before anything but the deadline could
    // have ended the acquire": the earliest of those is the read timeout noticing the dead connection.
    const { client, proxy } = await zk.viaProxy({ sessionTimeout: 20_000 });
    const readTimeout = (client.sessionTimeout * 2) / 3;
    const mutex = new Mutex(client, '/f/offline');

    // Sent, executed, reply lost on a half-open connection: the deadline passes before the client notices.
    let sent = false;
    const unsubscribe = proxy.onChunk((event) => {
      if (!sent && event.direction === 'upstream' && event.chunk.includes('-lock-')) {
        sent = true;
        proxy.blackhole('downstream');
      }
    });
    let started = performance.now();
    await assert.rejects(mutex.acquire({ timeout: 300 }), (e) => e instanceof LockError && e.code === 'LOCK_TIMEOUT');
    let waited = performance.now() - started;
    unsubscribe();
    assert.ok(sent, 'the create went upstream');
    assert.ok(waited < readTimeout, `rejected after ${waited.toFixed(0)} ms, before the read timeout (${readTimeout.toFixed(0)} ms)`);
    await eventually(async () => (await zk.children('/f/offline')).length === 2, ROUND_TRIPS_MS, 'the lost create did run on the server');

    // Never sent: the client knows it is disconnected (its connection was reset, new ones are refused) and queues the create.
    const suspended = nextEvent(client, 'suspended');
    proxy.passThrough();
    proxy.refuseNew(true);
    proxy.resetAll();
    await suspended;
    started = performance.now();
    await assert.rejects(mutex.acquire({ timeout: 300 }), (e) => e instanceof LockError && e.code === 'LOCK_TIMEOUT');
    waited = performance.now() - started;
    assert.ok(waited < readTimeout, `rejected after ${waited.toFixed(0)} ms while disconnected, before the read timeout (${readTimeout.toFixed(0)} ms)`);

    const reconnected = nextEvent(client, 'reconnected', sessionBound(client.sessionTimeout));
    proxy.refuseNew(false);
    await reconnected;
    await eventually(async () => (await zk.children('/f/offline')).length === 1, ROUND_TRIPS_MS, "the lost create's node removed after the reconnect");
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(await client.getEphemerals('/f/offline'), [], 'nothing of ours is left');
    await holder.release();
    await zk.assertNoNodes('/f/offline');
  });

  it('a holder cut off past its session timeout learns it lost the lock before anyone else acquires it', async (t) => {
    const { client, proxy } = await zk.viaProxy({ sessionTimeout: 2000 });
    const lease = await new Mutex(client, '/f/expire').acquire();
    let lostAt = Number.POSITIVE_INFINITY;
    lease.signal.addEventListener('abort', () => (lostAt = performance.now()));
    const other = await zk.client();
    const waiting = new Mutex(other, '/f/expire').acquire({ timeout: sessionBound(client.sessionTimeout) + ROUND_TRIPS_MS }).then((l) => ({ lease: l, at: performance.now() }));
    await eventually(async () => (await zk.children('/f/expire')).length === 2, ROUND_TRIPS_MS, 'other contender queued');
    proxy.blackhole('both');
    const next = await within(waiting, sessionBound(client.sessionTimeout), 'the other session acquires after the expiry');
    const reason = lease.signal.reason as LockLostError;
    assert.ok(reason instanceof LockLostError && ['SESSION_MAY_HAVE_EXPIRED', 'SESSIONEXPIRED'].includes(reason.reason), String(reason));
    assert.ok(lostAt < next.at, `signal aborted ${(next.at - lostAt).toFixed(0)} ms before the other session acquired`);
    t.diagnostic(`holder gave up (${reason.reason}) ${(next.at - lostAt).toFixed(0)} ms before the next session acquired (session timeout ${client.sessionTimeout} ms)`);
    assert.equal(lease.held, false);
    proxy.passThrough();
    await next.lease.release();
    await lease.release();
    await zk.assertNoNodes('/f/expire');
  });

  /** Session timeout of the waiters whose session the next tests let expire. */
  const EXPIRING_SESSION_MS = 1200;
  /** Their acquire timeout: past the expiry, the requeue with a new session and the handoff. */
  const EXPIRING_WAITER_TIMEOUT_MS = 2 * sessionBound(EXPIRING_SESSION_MS) + ROUND_TRIPS_MS;

  async function waiterThroughExpiry(path: string, failOnSessionExpiry: boolean): Promise<{ client: ZooKeeperClient; oldSession: bigint; holder: Lease; waiting: Promise<Lease> }> {
    const holder = await new Mutex(await zk.client(), path).acquire();
    const { client, proxy } = await zk.viaProxy({ sessionTimeout: EXPIRING_SESSION_MS });
    const oldSession = client.sessionId;
    const waiting = new Mutex(client, path, { failOnSessionExpiry }).acquire({ timeout: EXPIRING_WAITER_TIMEOUT_MS });
    waiting.catch(() => undefined);
    // Queued as the waiter itself knows it, not only as the server does: the reply to our request,
    // sent after its create and listing on the same session, comes after theirs. (A session expiring
    // while the create's reply is still on its way is the next-but-one test's case.)
    await eventually(async () => (await client.getEphemerals(path)).length === 1, ROUND_TRIPS_MS, 'waiter queued');
    const expired = nextEvent(client, 'expired', sessionBound(client.sessionTimeout));
    proxy.blackhole('both');
    await expired;
    await eventually(async () => (await zk.children(path)).length === 1, sessionBound(client.sessionTimeout), 'server removed the expired waiter node');
    proxy.passThrough();
    return { client, oldSession, holder, waiting };
  }

  it('a waiter whose session expired queues again with its new session and gets the lock', async () => {
    const { client, oldSession, holder, waiting } = await waiterThroughExpiry('/f/requeue', false);
    await eventually(async () => (await zk.children('/f/requeue')).length === 2, sessionBound(client.sessionTimeout), 'waiter queued again');
    assert.notEqual(client.sessionId, oldSession);
    await holder.release();
    const lease = await within(waiting, ROUND_TRIPS_MS, 'requeued waiter acquires');
    assert.equal(lease.sessionId, client.sessionId, 'the node belongs to the new session');
    await lease.release();
    await zk.assertNoNodes('/f/requeue');
  });

  it('with failOnSessionExpiry a waiter whose session expired rejects with SESSIONEXPIRED and leaves no node', async () => {
    const { holder, waiting } = await waiterThroughExpiry('/f/fail-on-expiry', true);
    // It rejects on the expiry itself (or one round trip later), before waiterThroughExpiry returns.
    await assert.rejects(within(waiting, ROUND_TRIPS_MS, 'waiter rejects'), (e) => e instanceof LockError && e.code === 'SESSIONEXPIRED');
    await holder.release();
    await zk.assertNoNodes('/f/fail-on-expiry');
  });

  it(
    'with failOnSessionExpiry a contender whose session expired before its create was answered rejects with SESSIONEXPIRED',
    async () => {
      const holder = await new Mutex(await zk.client(), '/f/fail-on-expiry-create').acquire();
      const { client, proxy } = await zk.viaProxy({ sessionTimeout: EXPIRING_SESSION_MS });
      // The create reaches the server and runs; its reply, and everything after it, is lost until the session has expired.
      const unsubscribe = proxy.onChunk((event) => {
        if (event.direction === 'upstream' && !event.dropped && event.chunk.includes('-lock-')) proxy.blackhole('both');
      });
      const expired = nextEvent(client, 'expired', sessionBound(client.sessionTimeout));
      const waiting = new Mutex(client, '/f/fail-on-expiry-create', { failOnSessionExpiry: true }).acquire({ timeout: EXPIRING_WAITER_TIMEOUT_MS });
      waiting.catch(() => undefined);
      try {
        await expired;
        unsubscribe();
        await eventually(async () => (await zk.children('/f/fail-on-expiry-create')).length === 1, sessionBound(client.sessionTimeout), 'server removed the expired node');
        proxy.passThrough();
        await assert.rejects(within(waiting, sessionBound(client.sessionTimeout), 'contender rejects'), (e) => e instanceof LockError && e.code === 'SESSIONEXPIRED');
      } finally {
        unsubscribe();
        proxy.passThrough();
        await holder.release();
        await waiting.then((lease) => lease.release(), () => undefined);
      }
      await zk.assertNoNodes('/f/fail-on-expiry-create');
    },
  );

  it('SimpleLock.tryAcquire answers with a lease when the reply to its create was lost (the node is ours)', async () => {
    await zk.admin.ensurePath('/f/simple');
    const { client, proxy } = await zk.viaProxy({ sessionTimeout: 6000 });
    const attempt = new SimpleLock(client, '/f/simple/node').tryAcquire();
    await loseReplyTo(proxy, '/f/simple/node');
    // The reply was lost with a connection reset: the client reconnects within the session and looks.
    const lease = await within(attempt, sessionBound(client.sessionTimeout), 'tryAcquire answers');
    assert.ok(lease, 'our own node: a lease, not null');
    assert.equal((await zk.admin.exists('/f/simple/node'))?.ephemeralOwner, client.sessionId);
    assert.equal(await new SimpleLock(await zk.client(), '/f/simple/node').tryAcquire(), null, 'held by us, not by another session');
    await lease.release();
    assert.equal(await zk.admin.exists('/f/simple/node'), null);
  });

  for (const [name, make] of [
    ['Mutex', (client: ZooKeeperClient, path: string) => new Mutex(client, path)],
    ['WriteLock', (client: ZooKeeperClient, path: string) => new ReadWriteLock(client, path).writeLock],
    ['ReadLock', (client: ZooKeeperClient, path: string) => new ReadWriteLock(client, path).readLock],
  ] as const) {
    it(`${name}: our node deleted by an operator between its create and the listing behind it: the acquire queues again, never PROTOCOL_ERROR (explorer N4)`, async () => {
      const path = `/f/deleted-before-listing/${name}`;
      await zk.admin.ensurePath(path);
      const client = await zk.client({ sessionTimeout: 6000 });
      // The acquire's listing, pipelined behind its create, is sent only once another session has
      // deleted every contender: the server runs our create, the delete, then the listing.
      let deleted = false;
      const list = client.getChildren.bind(client);
      Object.assign(client, {
        getChildren: async (at: string, options: Parameters<ZooKeeperClient['getChildren']>[1]) => {
          if (at === path && !deleted) {
            deleted = true;
            await eventually(async () => (await zk.admin.getChildren(path)).children.length === 1, ROUND_TRIPS_MS, 'our create ran');
            for (const child of (await zk.admin.getChildren(path)).children) await zk.admin.delete(`${path}/${child}`);
          }
          return list(at, options);
        },
      });
      try {
        const lease = await within(make(client, path).acquire({ timeout: 10_000 }), ROUND_TRIPS_MS, 'the acquire after the delete');
        assert.ok(deleted, 'the first listing came after the delete');
        assert.ok(lease.held);
        assert.deepEqual((await zk.admin.getChildren(path)).children, [lease.node.slice(path.length + 1)], 'only the node it queued again with');
        await lease.release();
        await zk.assertNoNodes(path);
      } finally {
        await client.close();
      }
    });
  }

  it('a request answered UNKNOWNSESSION (its session closed from outside while it was on its way): the session is over, the acquire queues on a new one, never UNKNOWNSESSION (explorer N3)', async () => {
    const path = '/f/unknown-session';
    await zk.admin.ensurePath(path);
    // The server answers so a request that reaches it after another connection ended the session
    // (the window is a few ms wide on a real server): the proxy plays that answer for the first create (create2, 15).
    let refused = false;
    const proxy = await FaultProxy.start({
      targetPort: zk.server.port,
      onRequest: ({ opcode }) => {
        if (opcode !== 15 || refused) return 'forward';
        refused = true;
        return { error: -12 };
      },
    });
    const client = await Client.connect(proxy.connectString, { sessionTimeout: 6000 });
    try {
      const session = client.sessionId;
      const lease = await within(new Mutex(client, path).acquire({ timeout: 10_000 }), ROUND_TRIPS_MS, 'the acquire');
      assert.ok(refused, 'the first create was answered UNKNOWNSESSION');
      assert.notEqual(lease.sessionId, session, 'on a new session');
      assert.ok(lease.held);
      assert.equal((await zk.admin.exists(lease.node))?.ephemeralOwner, lease.sessionId, 'its node, owned by the new session');
      assert.deepEqual((await zk.admin.getChildren(path)).children, [lease.node.slice(path.length + 1)], 'no other node');
      await lease.release();
    } finally {
      await client.close();
      await proxy.close();
    }
  });
});
