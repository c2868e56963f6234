import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Lease, LockError, Stat, ZooKeeperClient } from '../../src/index.js';
import { LockLostError, SimpleLock } from '../../src/index.js';
import { eventually, nextEvent } from '../support/wait.js';
import { isLockError, RecipeFixture, within } from './fixtures.js';
import { loseReplyTo, silenceRepliesAfter } from '../support/lose-reply.js';
import { ROUND_TRIPS_MS, sessionBound } from '../support/bounds.js';

describe('SimpleLock safety', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  it('two tryAcquire callers on one client: one lease, the other null; after the release and another process taking it, nobody stale holds', async () => {
    const client = await zk.client();
    const lock = new SimpleLock(client, '/ss/try/node');
    const a = await lock.tryAcquire();
    assert.ok(a, 'the first caller holds');
    const b = await new SimpleLock(client, '/ss/try/node').tryAcquire();
    const again = await lock.tryAcquire();
    await a.release();
    const other = await new SimpleLock(await zk.client(), '/ss/try/node').tryAcquire();
    assert.ok(other, 'another process takes the free lock');
    assert.equal(b?.held ?? false, false, 'a stale lease still reports held while another process holds the lock');
    assert.equal(b, null, `a second caller on the same session got a lease too (fencing token ${b?.fencingToken} = ${a.fencingToken})`);
    assert.equal(again, null, 'a second call on the same lock object got a lease too');
    await other.release();
    assert.equal(await zk.admin.exists('/ss/try/node'), null);
  });

  it('a second acquire on the same client waits for the first lease, then holds its own node (a new fencing token)', async () => {
    const client = await zk.client();
    const first = await new SimpleLock(client, '/ss/wait/node').acquire({ timeout: 20_000 });
    let releasedFirst = false;
    let settledEarly = false;
    const second = new SimpleLock(client, '/ss/wait/node').acquire({ timeout: 20_000 }).finally(() => (settledEarly = !releasedFirst));
    second.catch(() => undefined);
    // The second caller's create, its NODEEXISTS and its read have run once this later round trip of the same session answers.
    await client.sync('/ss/wait/node');
    await client.exists('/ss/wait/node');
    releasedFirst = true;
    await first.release();
    const lease = await within(second, 10_000, 'the waiting caller acquires after the release');
    assert.equal(settledEarly, false, 'the second acquire resolved while the first lease held the lock');
    assert.notEqual(lease.fencingToken, first.fencingToken, 'two leases with one fencing token');
    assert.equal((await zk.admin.exists('/ss/wait/node'))?.czxid, lease.fencingToken, "the lease is on the node it created");
    await lease.release();
    assert.equal(await zk.admin.exists('/ss/wait/node'), null);
  });

  it("a lost create reply adopts only this attempt's node: another caller's node of our session means taken", async () => {
    await zk.admin.ensurePath('/ss/lost');
    const { client, proxy } = await zk.viaProxy({ sessionTimeout: 6000 });
    const holder = await new SimpleLock(client, '/ss/lost/node').tryAcquire();
    assert.ok(holder);
    const reconnected = nextEvent(client, 'reconnected', sessionBound(client.sessionTimeout));
    const attempt = new SimpleLock(client, '/ss/lost/node').tryAcquire();
    await loseReplyTo(proxy, '/ss/lost/node');
    await reconnected;
    const stolen = await within(attempt, sessionBound(client.sessionTimeout), 'tryAcquire answers after the reconnect');
    assert.equal(stolen, null, "the lost-reply path adopted another caller's node of our session");
    assert.equal((await zk.admin.exists('/ss/lost/node'))?.czxid, holder.fencingToken, "the holder's node is untouched");
    await holder.release();
    assert.equal(await zk.admin.exists('/ss/lost/node'), null);
  });

  it('our node deleted and a namesake created: the signal aborts with NODE_DELETED and guard() refuses, writing nothing', async () => {
    const client = await zk.client();
    await zk.admin.ensurePath('/ss/guarded-state');
    const lease = await new SimpleLock(client, '/ss/namesake/node').acquire();
    // Nobody looked at the lease yet: the monitor has no watch to see the deletion with.
    await zk.admin.delete('/ss/namesake/node');
    const other = await new SimpleLock(await zk.client(), '/ss/namesake/node').tryAcquire();
    assert.ok(other, 'another process holds the namesake');
    await assert.rejects(lease.guard([{ op: 'setData', path: '/ss/guarded-state', data: 'stale' }]), isLockError('GUARD_NOT_SUPPORTED'));
    assert.equal((await zk.admin.getData('/ss/guarded-state')).data.length, 0, "guard() committed on the other holder's node");
    await eventually(() => lease.signal.aborted, 10_000, 'the signal aborts although a namesake exists');
    const reason = lease.signal.reason as LockLostError;
    assert.ok(reason instanceof LockLostError && reason.reason === 'NODE_DELETED', String(reason));
    assert.equal(lease.held, false);
    await lease.release();
    assert.equal((await zk.admin.exists('/ss/namesake/node'))?.czxid, other.fencingToken, "the stale lease's release left the namesake alone");
    await other.release();
  });

  it('guard() on a SimpleLock lease is refused with GUARD_NOT_SUPPORTED even while held', async () => {
    const client = await zk.client();
    await zk.admin.ensurePath('/ss/guarded-held');
    const lease = await new SimpleLock(client, '/ss/guard/node').acquire();
    assert.ok(lease.held);
    await assert.rejects(lease.guard([{ op: 'setData', path: '/ss/guarded-held', data: 'x' }]), (e) => isLockError('GUARD_NOT_SUPPORTED')(e) && (e as LockError).path === '/ss/guard/node');
    assert.equal((await zk.admin.getData('/ss/guarded-held')).data.length, 0);
    await lease.release();
  });

  it('a namesake created while we were disconnected: on reconnect (NodeDataChanged, not NodeDeleted) the signal aborts with NODE_DELETED', async () => {
    await zk.admin.ensurePath('/ss/offline');
    // A long session: the disconnection must not end the lease for the wrong reason.
    const { client, proxy } = await zk.viaProxy({ sessionTimeout: 20_000 });
    const lease = await new SimpleLock(client, '/ss/offline/node').acquire();
    assert.ok(!lease.signal.aborted);
    // One session's requests run in order: once this answers, the monitor's watch is set.
    await client.exists('/ss/offline');
    proxy.blackhole('both');
    await zk.admin.delete('/ss/offline/node');
    const other = await new SimpleLock(await zk.client(), '/ss/offline/node').tryAcquire();
    assert.ok(other, 'another process holds the namesake');
    const reconnected = nextEvent(client, 'reconnected', sessionBound(client.sessionTimeout));
    proxy.resetAll();
    proxy.passThrough();
    await reconnected;
    await eventually(() => lease.signal.aborted, 10_000, 'the signal aborts after the reconnect');
    const reason = lease.signal.reason as LockLostError;
    assert.ok(reason instanceof LockLostError && reason.reason === 'NODE_DELETED', String(reason));
    await lease.release();
    assert.equal((await zk.admin.exists('/ss/offline/node'))?.czxid, other.fencingToken, 'the namesake is untouched');
    await other.release();
  });

  it('a lost create reply and the deadline passing: the acquire rejects, and after the reconnect no node of ours is left', async () => {
    await zk.admin.ensurePath('/ss/leak');
    const { client, proxy } = await zk.viaProxy({ sessionTimeout: 4000 });
    // Sent, executed, reply lost on a half-open connection: the deadline passes before the client notices.
    const silence = silenceRepliesAfter(proxy, '/ss/leak/node');
    try {
      await within(
        assert.rejects(new SimpleLock(client, '/ss/leak/node').acquire({ timeout: 300 }), isLockError('LOCK_TIMEOUT')),
        sessionBound(client.sessionTimeout),
        'the acquire rejects',
      );
    } finally {
      silence.stop();
    }
    assert.ok(silence.sent, 'the create went upstream');
    await eventually(async () => (await zk.admin.exists('/ss/leak/node')) !== null, 10_000, 'the lost create runs on the server');
    silence.restore();
    await eventually(async () => (await zk.admin.exists('/ss/leak/node')) === null, sessionBound(client.sessionTimeout), "the lost create's node removed after the reconnect");
    assert.deepEqual(await client.getEphemerals('/ss/leak'), [], 'nothing of ours is left');
    const lease = await new SimpleLock(await zk.client(), '/ss/leak/node').tryAcquire();
    assert.ok(lease, 'the lock is free for others');
    await lease.release();
  });

  it('a CONNECTIONLOSS on the read after NODEEXISTS is retried, not thrown', async () => {
    await zk.admin.ensurePath('/ss/read-loss');
    const holder = await new SimpleLock(await zk.client(), '/ss/read-loss/node').acquire();
    const { client, proxy } = await zk.viaProxy({ sessionTimeout: 6000 });
    const attempt = new SimpleLock(client, '/ss/read-loss/node').tryAcquire();
    // Request #1 with the path is the create (NODEEXISTS), #2 the read of the holder's node.
    await loseReplyTo(proxy, '/ss/read-loss/node', 2);
    assert.equal(await within(attempt, sessionBound(client.sessionTimeout), 'tryAcquire answers after the reconnect'), null, 'taken by the holder');
    await holder.release();
    assert.equal(await zk.admin.exists('/ss/read-loss/node'), null);
  });

  it('a czxid-checked release whose delete meets BADVERSION (our node written meanwhile) still deletes our node', async () => {
    const client = await zk.client();
    const lease = await new SimpleLock(client, '/ss/badversion/node').acquire();
    // Someone writes our node between the release's read of it and its versioned delete.
    const exists = client.exists.bind(client);
    let written = false;
    client.exists = async (path, options) => {
      const stat = await exists(path, options);
      if (path === '/ss/badversion/node' && !written) {
        written = true;
        await zk.admin.setData(path, 'written meanwhile');
      }
      return stat;
    };
    try {
      await lease.release();
    } finally {
      client.exists = exists;
    }
    assert.ok(written, 'the release read the node before deleting it');
    assert.equal(await zk.admin.exists('/ss/badversion/node'), null, 'the release claimed our node gone while it is still there');
  });
  /**
   * Runs `between` once, after the lease's client has read `path` (its release's check of the
   * node's czxid) and before that read's answer is used: the answer as if it were delayed on its
   * way while others act. Its stat is the one read before `between`.
   */
  function afterCheck(client: ZooKeeperClient, path: string, between: () => Promise<void>): { readonly ran: boolean; restore(): void } {
    const exists = client.exists.bind(client);
    let ran = false;
    client.exists = async (p, options): Promise<Stat | null> => {
      const stat = await exists(p, options);
      if (p === path && !ran) {
        ran = true;
        await between();
      }
      return stat;
    };
    return {
      get ran() {
        return ran;
      },
      restore: () => (client.exists = exists),
    };
  }

  const ENDS = [
    { how: 'release()', acquire: (lock: SimpleLock) => lock.acquire(), end: (lease: Lease) => lease.release() },
    // The forced release runs on its own once the hold and its grace are over; release() then waits for it.
    { how: "the hold limit's forced release", acquire: (lock: SimpleLock) => lock.acquire({ maxHold: 200, forceReleaseAfter: 200 }), end: (lease: Lease) => lease.release() },
  ];

  for (const [i, { how, acquire, end }] of ENDS.entries()) {
    it(`${how}, its check answered late: a namesake another peer created (version 0) after someone deleted our node is left alone`, async () => {
      const path = `/ss/late-plain/${i}`;
      const client = await zk.client();
      const peer = await zk.client();
      const lease = await acquire(new SimpleLock(client, path));
      let namesake: bigint | undefined;
      // An operator force-releases our node; a peer that is not a SimpleLock (a plain create, as
      // a kazoo or Curator process or an older zklock makes it) takes the path at once.
      const check = afterCheck(client, path, async () => {
        await zk.admin.delete(path);
        namesake = (await peer.create(path, 'peer', { mode: 'EPHEMERAL' })).stat.czxid;
      });
      try {
        await within(end(lease), ROUND_TRIPS_MS, 'the release ends');
      } finally {
        check.restore();
      }
      assert.ok(check.ran, 'the release checked the node before deleting it');
      assert.equal((await zk.admin.exists(path))?.czxid, namesake, "the late delete removed the peer's node");
    });

    it(`${how}, its check answered late: a SimpleLock namesake made after our lease's watch heard the deletion is left alone`, async () => {
      const path = `/ss/late-simple/${i}`;
      const client = await zk.client();
      const lease = await acquire(new SimpleLock(client, path));
      // The holder looks at its lease, as a holder that heeds its signal does; once this later
      // request of the session answers, the lease's watch on its node is set.
      assert.equal(lease.signal.aborted, false);
      await client.sync(path);
      let other: Lease | undefined;
      const check = afterCheck(client, path, async () => {
        await zk.admin.delete(path);
        // Ordered after the deletion's notification to our session: our client has heard it.
        await client.sync(path);
        other = await new SimpleLock(await zk.client(), path).acquire({ timeout: ROUND_TRIPS_MS });
      });
      try {
        await within(end(lease), ROUND_TRIPS_MS, 'the release ends');
      } finally {
        check.restore();
      }
      assert.ok(check.ran && other, 'the release checked the node before deleting it, and another SimpleLock took the path meanwhile');
      assert.equal((await zk.admin.exists(path))?.czxid, other.fencingToken, "the late delete removed the next holder's node");
      assert.equal(other.held, true);
      await other.release();
    });
  }
});
