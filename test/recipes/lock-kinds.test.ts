import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ClientOptions, TryAcquireOptions, ZooKeeperClient } from '../../src/index.js';
import { LockError, LockLostError, Semaphore } from '../../src/index.js';
import type { FaultProxy } from '../../src/testing/index.js';
import { eventually, nextEvent } from '../support/wait.js';
import { RecipeFixture, sleep, within } from './fixtures.js';
import { onRequests } from './fixtures.js';
import type { AnyLease, AnyLock, LockKind, MakeOptions } from './lock-factories.js';
import { KINDS, blackholeRepliesAfter, childVersions, dataWatchesOf, nodesHeld, nodesOf, nodesOwnedBy, prepare, sessionsOf } from './lock-factories.js';
import { ROUND_TRIPS_MS, sessionBound } from '../support/bounds.js';
import { loseReplyTo } from '../support/lose-reply.js';

/**
 * One behavioural suite over every lock kind (issue 10): timeouts, aborts, lost create replies,
 * session expiry while waiting and while holding, an admin deleting the holder's node. Every
 * test ends by checking, through the admin client, that the lock has no node left while the
 * test's clients are still open (a leak of a live session would never go).
 */

/** What waits on a session's fate is bounded by its timeout (see test/support/bounds.ts). */
const bound = sessionBound;
const ROUND_TRIPS = ROUND_TRIPS_MS;
/** Session timeouts: short where the test waits for an expiry, long where it must survive a fault (an outage of OUTAGE_DEADLINE + 1.5 s). */
const EXPIRING = 1200;
const HOLDER_EXPIRING = 2000;
const SURVIVING = 20_000;
/** The acquire's deadline in the outage cases: long enough to stage the outage first on a loaded machine. */
const OUTAGE_DEADLINE = 6000;
const TEST_TIMEOUT = 90_000;

function isLockError(code: string): (error: unknown) => boolean {
  return (error) => {
    assert.ok(error instanceof LockError, `a LockError ${code}, got ${String(error)} (${(error as { name?: string })?.name}, code ${(error as { code?: string })?.code})`);
    assert.equal(error.code, code, `LockError code: ${error.message}`);
    return true;
  };
}

/** The reason `signal` aborts with, bounded. */
function abortReason(signal: AbortSignal, ms: number, what: string): Promise<unknown> {
  const aborted = new Promise<unknown>((resolve) => {
    if (signal.aborted) resolve(signal.reason);
    else signal.addEventListener('abort', () => resolve(signal.reason), { once: true });
  });
  return within(aborted, ms, what);
}

/** One test's lock path and clients; `run` checks for leaks and closes the clients whatever happened. */
class Scenario {
  readonly path: string;
  private readonly clients: ZooKeeperClient[] = [];

  constructor(
    private readonly zk: RecipeFixture,
    readonly kind: LockKind,
    slug: string,
  ) {
    this.path = `/lk/${slug}/${kind.name}`;
  }

  async client(options: ClientOptions = {}): Promise<ZooKeeperClient> {
    const client = await this.zk.client(options);
    this.clients.push(client);
    return client;
  }

  async viaProxy(options: ClientOptions): Promise<{ client: ZooKeeperClient; proxy: FaultProxy }> {
    const pair = await this.zk.viaProxy(options);
    this.clients.push(pair.client);
    return pair;
  }

  get admin(): ZooKeeperClient {
    return this.zk.admin;
  }

  nodes(): Promise<string[]> {
    return nodesOf(this.kind, this.zk.admin, this.path);
  }

  owned(session: bigint): Promise<string[]> {
    return nodesOwnedBy(this.kind, this.zk.admin, this.path, session);
  }

  /** The lock made for `client` (the side under test). */
  lock(client: ZooKeeperClient, options: MakeOptions = {}): AnyLock {
    return this.kind.make(client, this.path, options);
  }

  rival(client: ZooKeeperClient): AnyLock {
    return this.kind.rival(client, this.path);
  }

  /**
   * Resolves once a waiter of `session` holds the `count` nodes it waits with and, when `watching`
   * (always for SimpleLock, whose waiters own no node), has set the data watch it waits on.
   */
  async queued(session: bigint, count: number, what: string, watching = count === 0): Promise<void> {
    await eventually(
      async () => (await this.owned(session)).length === count && (!watching || (await dataWatchesOf(this.zk.server, session)).length > 0),
      ROUND_TRIPS,
      what,
    );
  }

  async run(body: (s: this) => Promise<void>): Promise<void> {
    await prepare(this.kind, this.zk.admin, this.path);
    try {
      await body(this);
      // Still open: a node a live session leaked would stay; one of an expired session goes within its timeout.
      await eventually(async () => (await this.nodes()).length === 0, bound(SURVIVING), `no node left under ${this.path} (all leases released)`).catch(async (error: unknown) => {
        throw new Error(`${(error as Error).message}: ${(await this.nodes()).join(', ')}`);
      });
    } finally {
      await Promise.all(this.clients.map((c) => c.close()));
    }
  }
}

describe('every lock kind under the same faults (issue 10)', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  /** One `it` per kind: each kind has its own path and clients, so they run concurrently. */
  function eachKind(slug: string, title: string, body: (s: Scenario) => Promise<void>, kinds: readonly LockKind[] = KINDS): void {
    for (const kind of kinds) {
      it(`${kind.name}: ${title}`, { timeout: TEST_TIMEOUT }, () => new Scenario(zk, kind, slug).run(body));
    }
  }

  describe('timeouts and bad input', { concurrency: true }, () => {
    eachKind('timeout', 'acquire({ timeout }) while another session holds rejects with LockError LOCK_TIMEOUT and leaves no node of the waiter', async (s) => {
      const holder = await s.rival(await s.client()).acquire();
      const client = await s.client();
      await assert.rejects(within(s.lock(client).acquire({ timeout: 500 }), 500 + ROUND_TRIPS, 'acquire rejects'), isLockError('LOCK_TIMEOUT'));
      assert.deepEqual(await s.owned(client.sessionId), [], 'no node of the waiter is left');
      assert.ok(holder.held, 'the holder still holds');
      await holder.release();
    });

    eachKind('bad-input', 'a negative or NaN timeout is LockError INVALID_ARGUMENT and creates nothing', async (s) => {
      const client = await s.client();
      const before = await childVersions(s.kind, s.admin, s.path);
      for (const timeout of [-1, Number.NaN]) {
        await assert.rejects(within(s.lock(client).acquire({ timeout }), ROUND_TRIPS, `acquire({ timeout: ${timeout} }) rejects`), isLockError('INVALID_ARGUMENT'));
      }
      assert.deepEqual(await childVersions(s.kind, s.admin, s.path), before, 'no node was created (nor deleted) under the lock');
    });

    eachKind('try-timeout', 'tryAcquire({ timeout }) is LockError INVALID_ARGUMENT naming signal, and creates nothing', async (s) => {
      const client = await s.client();
      const before = await childVersions(s.kind, s.admin, s.path);
      // As an untyped caller (or one passing its AcquireOptions) would.
      const options = { timeout: 5000 } as unknown as TryAcquireOptions;
      const tries: [string, Promise<unknown>][] = [['tryAcquire', s.lock(client).tryAcquire(options)]];
      if (s.kind.name === 'Semaphore') tries.push(['tryAcquire leases: 1', new Semaphore(client, s.path, 1).tryAcquire({ ...options, leases: 1 })]);
      for (const [what, attempt] of tries) {
        await assert.rejects(within(attempt, ROUND_TRIPS, `${what} rejects`), (error: unknown) => {
          assert.ok(isLockError('INVALID_ARGUMENT')(error) && error instanceof LockError);
          assert.equal(error.op, 'tryAcquire');
          assert.ok(error.path?.startsWith(s.path), `the lock's path, got ${error.path}`);
          assert.match(error.message, /AbortSignal\.timeout/);
          return true;
        });
      }
      assert.deepEqual(await childVersions(s.kind, s.admin, s.path), before, 'no node was created (nor deleted) under the lock');
    });
  });

  describe('aborts', { concurrency: true }, () => {
    eachKind('abort-wait', 'acquire({ signal }) aborted while waiting rejects with LockError ABORTED and leaves no node', async (s) => {
      const holder = await s.rival(await s.client()).acquire();
      const client = await s.client();
      const controller = new AbortController();
      const waiting = s.lock(client).acquire({ signal: controller.signal });
      waiting.catch(() => undefined);
      await s.queued(client.sessionId, s.kind.waiterNodes, 'waiter queued');
      controller.abort(new Error('caller gave up'));
      await assert.rejects(within(waiting, ROUND_TRIPS, 'aborted acquire rejects'), isLockError('ABORTED'));
      assert.deepEqual(await s.owned(client.sessionId), [], 'no node of the waiter is left');
      assert.ok(holder.held, 'the holder still holds');
      await holder.release();
    });

    eachKind('abort-early', 'an already-aborted signal rejects with LockError ABORTED and creates nothing', async (s) => {
      const client = await s.client();
      const before = await childVersions(s.kind, s.admin, s.path);
      await assert.rejects(within(s.lock(client).acquire({ signal: AbortSignal.abort() }), ROUND_TRIPS, 'acquire rejects'), isLockError('ABORTED'));
      assert.deepEqual(await childVersions(s.kind, s.admin, s.path), before, 'no node was created (nor deleted) under the lock');
    });

    eachKind('try-abort-early', 'tryAcquire({ signal }) with an already-aborted signal rejects with LockError ABORTED and creates nothing', async (s) => {
      const client = await s.client();
      const before = await childVersions(s.kind, s.admin, s.path);
      await assert.rejects(within(s.lock(client).tryAcquire({ signal: AbortSignal.abort() }), ROUND_TRIPS, 'tryAcquire rejects'), isLockError('ABORTED'));
      assert.deepEqual(await childVersions(s.kind, s.admin, s.path), before, 'no node was created (nor deleted) under the lock');
    });
  });

  describe('tryAcquire', { concurrency: true }, () => {
    eachKind('try-held', 'while another session holds: null, and no node left', async (s) => {
      const holder = await s.rival(await s.client()).acquire();
      const client = await s.client();
      assert.equal(await within(s.lock(client).tryAcquire(), ROUND_TRIPS, 'tryAcquire answers'), null);
      assert.deepEqual(await s.owned(client.sessionId), [], 'no node of ours is left');
      await holder.release();
    });

    eachKind('try-free', 'while free: a lease on exactly its own nodes, released cleanly', async (s) => {
      const client = await s.client();
      const lease = await within(s.lock(client).tryAcquire(), ROUND_TRIPS, 'tryAcquire answers');
      assert.ok(lease, 'a lease');
      assert.ok(lease.held);
      assert.deepEqual(await s.owned(client.sessionId), nodesHeld(lease).sort(), 'our nodes are exactly the lease’s');
      await lease.release();
      assert.deepEqual(await s.owned(client.sessionId), [], 'released: no node of ours');
    });
  });

  describe('a lost create reply', { concurrency: true }, () => {
    eachKind('lost-free', 'on a free lock is adopted: exactly the lease’s nodes are ours, and the lock excludes others until released', async (s) => {
      const { client, proxy } = await s.viaProxy({ sessionTimeout: SURVIVING });
      const session = client.sessionId;
      const acquiring = s.lock(client).acquire({ timeout: bound(SURVIVING) });
      acquiring.catch(() => undefined);
      await loseReplyTo(proxy, s.kind.createMarker(s.path).free);
      const lease = await within(acquiring, bound(SURVIVING), 'acquire after the lost reply');
      assert.equal(client.sessionId, session, 'same session after the reconnect');
      assert.ok(lease.held);
      for (const parent of s.kind.parents(s.path)) await s.admin.sync(parent);
      assert.deepEqual(await s.owned(session), nodesHeld(lease).sort(), 'exactly the lease’s nodes are ours: the lost create was adopted, not repeated');
      const other = await s.client();
      assert.equal(await s.rival(other).tryAcquire(), null, 'another session cannot get the lock while we hold it');
      await lease.release();
      const next = await s.rival(other).tryAcquire();
      assert.ok(next, 'free again after our release');
      await next.release();
    });

    eachKind('lost-ensure', 'of the create of its missing lock path is ridden out: the acquire gets the lock, never CONNECTIONLOSS (explorer N1)', async (s) => {
      // Deepest first: each parent goes, so the acquire's first create is refused NONODE and it creates the path itself.
      for (const parent of [...s.kind.parents(s.path)].sort((a, b) => b.length - a.length)) await s.admin.delete(parent);
      const { client, proxy } = await s.viaProxy({ sessionTimeout: SURVIVING });
      const session = client.sessionId;
      const acquiring = s.lock(client).acquire({ timeout: bound(SURVIVING) });
      acquiring.catch(() => undefined);
      // The create of a parent itself, not of a node in it: its path, then no data (length 0) and one ACL.
      await loseReplyTo(proxy, s.kind.parents(s.path).map((parent) => `${parent}\0\0\0\0\0\0\0\u0001`));
      const lease = await within(acquiring, bound(SURVIVING), 'acquire after the lost reply');
      assert.equal(client.sessionId, session, 'same session after the reconnect');
      assert.ok(lease.held);
      assert.deepEqual(await s.owned(session), nodesHeld(lease).sort(), 'exactly the lease’s nodes are ours');
      await lease.release();
    });

    /**
     * `stage` black-holes the replies to our acquire at some point of it; the deadline passes
     * while none can come back, then the connection is reset and let through again: the acquire
     * must reject with LOCK_TIMEOUT and, after the reconnect, no node of ours may remain.
     */
    async function deadlineDuringOutage(s: Scenario, stage: (proxy: FaultProxy, session: bigint) => Promise<void>): Promise<void> {
      const TIMEOUT = OUTAGE_DEADLINE;
      const { client, proxy } = await s.viaProxy({ sessionTimeout: SURVIVING });
      const session = client.sessionId;
      const acquiring = s.lock(client).acquire({ timeout: TIMEOUT });
      acquiring.catch(() => undefined);
      const early = acquiring.then(
        (lease) => `resolved with ${nodesHeld(lease).join(', ')}`,
        (error: unknown) => `rejected with ${String(error)}`,
      );
      const staged = await Promise.race([stage(proxy, session).then(() => undefined), early]);
      assert.equal(staged, undefined, 'stage: the replies were cut before the acquire settled (raise TIMEOUT if this machine is that slow)');
      // Let the deadline pass while no reply can come back, whether or not the acquire noticed.
      await Promise.race([acquiring.catch(() => undefined), sleep(TIMEOUT + 1500)]);
      proxy.resetAll();
      proxy.passThrough();
      await assert.rejects(within(acquiring, bound(SURVIVING), 'acquire settles after the reconnect'), isLockError('LOCK_TIMEOUT'));
      await eventually(async () => (await s.owned(session)).length === 0, bound(SURVIVING), 'no node of ours remains after the reconnect').catch(async (error: unknown) => {
        throw new Error(`${(error as Error).message}: ${(await s.owned(session)).join(', ')} (client ${client.state}, session ${client.sessionId === session ? 'same' : 'new'})`);
      });
    }

    eachKind('lost-held', 'while another session holds and the deadline passes during the outage: LockError LOCK_TIMEOUT, then no node of ours', async (s) => {
      const holder = await s.rival(await s.client()).acquire();
      await deadlineDuringOutage(s, (proxy) => blackholeRepliesAfter(proxy, s.kind.createMarker(s.path).contended));
      assert.ok(holder.held, 'the holder still holds');
      await holder.release();
    });

    eachKind('lost-free-deadline', 'on a free lock when the deadline passes during the outage: LockError LOCK_TIMEOUT, then no node of ours', async (s) => {
      await deadlineDuringOutage(s, (proxy) => blackholeRepliesAfter(proxy, s.kind.createMarker(s.path).free));
      const other = await s.client();
      const lease = await s.rival(other).tryAcquire();
      assert.ok(lease, 'the lock is free for others');
      await lease.release();
    });

    /**
     * The waiter wakes (a second waiter ahead of it gives up; for SimpleLock, whose waiters own no
     * node, the holder releases) and the replies to the first request it sends then are lost: its
     * check of the contenders still ahead, its look for a free slot, or SimpleLock's create.
     */
    eachKind('lost-wake', 'right after the waiter wakes, the deadline passing during the outage: LockError LOCK_TIMEOUT, then no node of ours', async (s) => {
      const holder = await s.rival(await s.client()).acquire();
      const ahead = s.kind.rivalWaiterNodes > 0 ? await s.client() : undefined;
      const giveUp = new AbortController();
      const aheadWaiting = ahead && s.rival(ahead).acquire({ signal: giveUp.signal });
      aheadWaiting?.catch(() => undefined);
      if (ahead) await s.queued(ahead.sessionId, s.kind.rivalWaiterNodes, 'the waiter ahead queued');
      await deadlineDuringOutage(s, async (proxy, session) => {
        // Watching: only then is its next request the one that follows the wake.
        await s.queued(session, s.kind.waiterNodes, 'our waiter queued and watching', true);
        // Armed before the wake: a waiter sends nothing but pings until something it waits for goes.
        const cut = blackholeRepliesAfter(proxy);
        if (ahead) giveUp.abort();
        else await holder.release();
        await cut;
      });
      if (aheadWaiting) await assert.rejects(aheadWaiting, isLockError('ABORTED'));
      if (ahead) {
        assert.ok(holder.held, 'the holder still holds');
        await holder.release();
      }
    });
  });

  describe('session expiry while waiting', { concurrency: true }, () => {
    /**
     * A waiter (`make`) queued behind a rival holder, its session expired by black-holing it; the
     * network is back on return. `meanwhile` runs before the network comes back: the waiter has
     * no session then.
     */
    async function waiterThroughExpiry(
      s: Scenario,
      failOnSessionExpiry: boolean,
      options: { signal?: AbortSignal; meanwhile?: (proxy: FaultProxy, holder: AnyLease) => Promise<void> } = {},
    ): Promise<{ client: ZooKeeperClient; oldSession: bigint; holder: AnyLease; waiting: Promise<AnyLease> }> {
      const holder = await s.rival(await s.client()).acquire();
      const { client, proxy } = await s.viaProxy({ sessionTimeout: EXPIRING });
      const oldSession = client.sessionId;
      const waiting = s.lock(client, failOnSessionExpiry ? { failOnSessionExpiry } : {}).acquire(options.signal ? { signal: options.signal } : { timeout: 60_000 });
      waiting.catch(() => undefined);
      await s.queued(oldSession, s.kind.waiterNodes, 'waiter queued');
      const expired = nextEvent(client, 'expired', bound(EXPIRING));
      proxy.blackhole('both');
      await expired;
      await eventually(async () => (await s.owned(oldSession)).length === 0, bound(EXPIRING), "the server removed the expired session's nodes");
      await options.meanwhile?.(proxy, holder);
      proxy.passThrough();
      return { client, oldSession, holder, waiting };
    }

    /**
     * Issue 25 item 1: the waiter joins again at once when it hears of the expiry, while the client
     * has no session. Its create then runs on the next one: it must be told apart from the expired
     * session's, and a create aborted in flight must still be looked for and deleted. The holder
     * goes meanwhile, so that SimpleLock's create makes the node too.
     */
    eachKind('between-sessions', 'aborted while the create of its new session is unanswered: LockError ABORTED, and no node of the new session stays', async (s) => {
      const giveUp = new AbortController();
      let sent = false;
      const { client, waiting } = await waiterThroughExpiry(s, false, {
        signal: giveUp.signal,
        meanwhile: async (proxy, holder) => {
          await holder.release();
          // The caller gives up as the create goes up: the server runs it, the client hears no answer.
          const marker = s.kind.createMarker(s.path).contended;
          proxy.onChunk((event) => {
            if (sent || event.direction !== 'upstream' || event.dropped || !event.chunk.includes(marker)) return;
            sent = true;
            giveUp.abort(new Error('caller gave up'));
          });
        },
      });
      await assert.rejects(within(waiting, bound(EXPIRING), 'the aborted acquire rejects'), isLockError('ABORTED'));
      assert.ok(sent, 'the create of the new session went up before the abort');
      await client.waitForConnected({ timeout: bound(EXPIRING) });
      const session = client.sessionId;
      await eventually(async () => (await s.owned(session)).length === 0, ROUND_TRIPS, 'no node of the new session stays').catch(async (error: unknown) => {
        throw new Error(`${(error as Error).message}: ${(await s.owned(session)).join(', ')}`);
      });
      assert.equal(client.sessionId, session, 'the new session lives on (its nodes did not go with it)');
    });

    eachKind('expiry-wait', 'the waiter queues again with its new session and gets the lock once the holder releases', async (s) => {
      const { client, oldSession, holder, waiting } = await waiterThroughExpiry(s, false);
      if (s.kind.waiterNodes > 0) {
        await eventually(async () => client.sessionId !== 0n && (await s.owned(client.sessionId)).length > 0, bound(EXPIRING), 'waiter queued again with its new session');
      }
      assert.ok(holder.held, 'the holder still holds');
      await holder.release();
      const lease = await within(waiting, bound(EXPIRING), 'the re-queued waiter acquires');
      assert.notEqual(client.sessionId, oldSession);
      assert.ok(lease.held, 'the lease handed out is held');
      assert.deepEqual(sessionsOf(lease), sessionsOf(lease).map(() => client.sessionId), 'every node of the lease belongs to the new session');
      assert.deepEqual(await s.owned(client.sessionId), nodesHeld(lease).sort(), 'our nodes are exactly the lease’s');
      await lease.release();
    });

    /**
     * The same, the create's reply lost instead: the connection drops with it, and the caller
     * gives up while the acquire adopts (it waits for the reconnect to look for its node).
     */
    eachKind('between-sessions-lost', 'its create on the new session answered into a dropped connection, aborted during the adoption: LockError ABORTED, and no node of the new session stays', async (s) => {
      const giveUp = new AbortController();
      let sent = false;
      let droppedBefore = 0;
      let fault: FaultProxy | undefined;
      const { client, waiting } = await waiterThroughExpiry(s, false, {
        signal: giveUp.signal,
        meanwhile: async (proxy, holder) => {
          await holder.release();
          fault = proxy;
          droppedBefore = proxy.stats().droppedDownstreamBytes;
          const marker = s.kind.createMarker(s.path).contended;
          proxy.onChunk((event) => {
            if (sent || event.direction !== 'upstream' || event.dropped || !event.chunk.includes(marker)) return;
            sent = true;
            proxy.blackhole('downstream');
          });
        },
      });
      await eventually(() => sent && fault!.stats().droppedDownstreamBytes > droppedBefore, bound(EXPIRING), "the reply to the new session's create dropped");
      const session = client.sessionId;
      const suspended = nextEvent(client, 'suspended', ROUND_TRIPS);
      fault!.resetAll();
      fault!.passThrough();
      await suspended;
      giveUp.abort(new Error('caller gave up'));
      await assert.rejects(within(waiting, bound(EXPIRING), 'the aborted acquire rejects'), isLockError('ABORTED'));
      await eventually(async () => (await s.owned(session)).length === 0, ROUND_TRIPS, 'no node of the new session stays').catch(async (error: unknown) => {
        throw new Error(`${(error as Error).message}: ${(await s.owned(session)).join(', ')}`);
      });
      assert.equal(client.sessionId, session, 'the new session lives on (its nodes did not go with it)');
    });

    eachKind(
      'expiry-wait-fail',
      'with failOnSessionExpiry: LockError SESSIONEXPIRED and no node',
      async (s) => {
        const { client, holder, waiting } = await waiterThroughExpiry(s, true);
        await assert.rejects(within(waiting, bound(EXPIRING), 'waiter rejects'), isLockError('SESSIONEXPIRED'));
        await client.waitForConnected({ timeout: bound(EXPIRING) });
        assert.deepEqual(await s.owned(client.sessionId), [], 'no node of the new session');
        await holder.release();
      },
      KINDS.filter((kind) => kind.hasFailOnSessionExpiry),
    );
  });

  describe('during the liveness proof', { concurrency: true }, () => {
    const PROOF_SESSION = 4000;
    /**
     * The proof trails the present by at least a quarter of the session timeout (see
     * liveness-proof.ts): with a margin of 0.9 of it, only a handshake's own proof stands, for a
     * tenth of it. Once that has run out, every acquire rebuilds the proof before it hands a
     * lease out (proveFresh: a sync, then a setACL of our node); `during` runs as the setACL goes.
     */
    async function duringProof(
      s: Scenario,
      during: (client: ZooKeeperClient) => void,
      signal?: AbortSignal,
      client: ZooKeeperClient | undefined = undefined,
    ): Promise<{ client: ZooKeeperClient; acquired: Promise<AnyLease> }> {
      client ??= await s.client({ sessionTimeout: PROOF_SESSION });
      const safetyMargin = 0.9 * PROOF_SESSION;
      await eventually(() => client.sessionAliveUntil() - safetyMargin <= performance.now(), ROUND_TRIPS, "the handshake's proof ran out");
      let proving = false;
      onRequests(client, new Set(['setACL']), () => {
        if (proving) return;
        proving = true;
        during(client);
      });
      const acquired = s.lock(client, { safetyMargin }).acquire(signal ? { signal } : {});
      acquired.catch(() => undefined);
      await within(acquired.catch(() => undefined), ROUND_TRIPS, 'the acquire settles');
      assert.ok(proving, 'the acquire rebuilt the proof');
      return { client, acquired };
    }

    eachKind('abort-proof', 'aborted while the liveness proof is rebuilt: LockError ABORTED, and no node (issue 25 item 4)', async (s) => {
      const giveUp = new AbortController();
      const { client, acquired } = await duringProof(s, () => giveUp.abort(new Error('caller gave up')), giveUp.signal);
      await assert.rejects(acquired, isLockError('ABORTED'));
      assert.deepEqual(await s.owned(client.sessionId), [], 'no node of ours is left');
    });

    eachKind('lost-proof', 'the reply to the proof\'s write lost with the connection: the acquire proves again once reconnected and hands out a live lease (explorer, handed-out-lost)', async (s) => {
      const { client, proxy } = await s.viaProxy({ sessionTimeout: PROOF_SESSION });
      const session = client.sessionId;
      let reconnected: Promise<unknown> | undefined;
      // As the setACL goes, every reply is black-holed; once it has reached the server, the connection is reset.
      const { acquired } = await duringProof(
        s,
        () => {
          proxy.blackhole('downstream');
          reconnected = (async () => {
            await sleep(100);
            proxy.resetAll();
            proxy.passThrough();
          })();
        },
        undefined,
        client,
      );
      await reconnected;
      const lease = await acquired;
      assert.equal(client.sessionId, session, 'the same session, reconnected');
      assert.equal(lease.signal.aborted, false, `handed out live, not lost (${String(lease.signal.reason)})`);
      await lease.release();
    });

    eachKind('close-proof', 'the client closed while the liveness proof is rebuilt: CLOSED, and no lease is handed out (issue 25 item 12)', async (s) => {
      const { acquired } = await duringProof(s, (client) => void client.close());
      await assert.rejects(acquired, (error: unknown) => {
        assert.equal((error as { code?: string }).code, 'CLOSED', `rejected with CLOSED, got ${String(error)}`);
        return true;
      });
    });
  });

  describe('an admin deleting a waiter\'s node', { concurrency: true }, () => {
    // A lease promises that its nodes exist while its signal is not aborted: the acquire must not
    // hand out one whose node went while it waited (it may queue again, or fail with a LockError).
    eachKind(
      'admin-delete-waiter',
      'the acquire never resolves with a lease whose node is already gone',
      async (s) => {
        const holder = await s.rival(await s.client()).acquire();
        const client = await s.client();
        const waiting = s.lock(client).acquire({ timeout: 60_000 });
        waiting.catch(() => undefined);
        await s.queued(client.sessionId, s.kind.waiterNodes, 'waiter queued');
        // The first node the waiter made: its queue place, or the first lock a multi-lock took.
        const [first] = await s.owned(client.sessionId);
        await s.admin.delete(first!);
        await holder.release();
        const outcome = await within(waiting.then((lease) => ({ lease }), (error: unknown) => ({ error })), ROUND_TRIPS, 'the waiter settles once the holder released');
        if ('error' in outcome) {
          assert.ok(outcome.error instanceof LockError, `a typed LockError: ${String(outcome.error)}`);
          assert.deepEqual(await s.owned(client.sessionId), [], 'no node of ours is left');
          return;
        }
        const { lease } = outcome;
        // Only the admin deletes here, and it is done: a node missing now was missing when the lease was handed out.
        const missing = [];
        for (const node of nodesHeld(lease)) if (!(await s.admin.exists(node))) missing.push(node);
        assert.deepEqual(missing, [], `every node of the lease exists (lease.held ${lease.held})`);
        await lease.release();
      },
      KINDS.filter((kind) => kind.waiterNodes > 0),
    );
  });

  describe('losing a held lock', { concurrency: true }, () => {
    eachKind('expiry-hold', 'a holder cut off past its session timeout: its signal aborts before another session acquires, and held is false', async (s) => {
      const { client, proxy } = await s.viaProxy({ sessionTimeout: HOLDER_EXPIRING });
      const lease = await s.lock(client).acquire({ timeout: ROUND_TRIPS });
      let signalAt = Number.POSITIVE_INFINITY;
      lease.signal.addEventListener('abort', () => (signalAt = performance.now()), { once: true });
      const other = await s.client();
      const waiting = s
        .rival(other)
        .acquire({ timeout: 60_000 })
        .then((next) => ({ lease: next, at: performance.now() }));
      waiting.catch(() => undefined);
      await s.queued(other.sessionId, s.kind.rivalWaiterNodes, 'the other session queued');
      proxy.blackhole('both');
      const next = await within(waiting, bound(HOLDER_EXPIRING), 'the other session acquires after the expiry');
      const reason = lease.signal.reason as unknown;
      assert.ok(reason instanceof LockLostError && ['SESSIONEXPIRED', 'SESSION_MAY_HAVE_EXPIRED'].includes(reason.reason), `lost for the session: ${String(reason)}`);
      assert.ok(signalAt < next.at, `the holder's signal aborted (${signalAt.toFixed(1)}) before the other session acquired (${next.at.toFixed(1)})`);
      assert.equal(lease.held, false);
      proxy.passThrough();
      await next.lease.release();
      await lease.release();
    });

    eachKind('admin-delete', "an admin deleting the holder's node aborts its signal with NODE_DELETED, and held is false", async (s) => {
      const lease = await s.lock(await s.client()).acquire({ timeout: ROUND_TRIPS });
      const lost = abortReason(lease.signal, ROUND_TRIPS, 'the lease signal aborts');
      await s.admin.delete(nodesHeld(lease)[0]!);
      const reason = await lost;
      assert.ok(reason instanceof LockLostError && reason.reason === 'NODE_DELETED', `lost for the deletion: ${String(reason)}`);
      assert.equal(lease.held, false);
      await lease.release();
    });
  });
});
