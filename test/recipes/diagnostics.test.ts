import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import type { AcquireMessage, LeaseMessage, LostMessage, ReleaseMessage, RequestMessage } from '../../src/index.js';
import { MultiLock, Mutex, ReadWriteLock, Semaphore, SimpleLock, acquireChannel, lostChannel, releaseChannel, requestChannel, requestRevocation, revocationChannel } from '../../src/index.js';
import { ROUND_TRIPS_MS, sessionBound } from '../support/bounds.js';
import { channelLog } from '../support/channel-log.js';
import { serverWatches } from '../support/server-watches.js';
import { eventually } from '../support/wait.js';
import { RecipeFixture, isLockError, seqOf, sleep } from './fixtures.js';

const hex = (id: bigint): string => `0x${id.toString(16)}`;
const under = (root: string) => (m: { lockPath: string }): boolean => m.lockPath.startsWith(root);

describe('the lock diagnostics channels (zklock:lock:*)', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  it('acquire: a waiter behind a holder is traced from start to asyncEnd with its queue position, wait time, node, token and session', async () => {
    const log = channelLog<AcquireMessage>(acquireChannel, under('/dg/acquire'));
    const [a, b] = [await zk.client(), await zk.client()];
    const holder = await new Mutex(a, '/dg/acquire').acquire();
    const calledAt = performance.now();
    const waiting = new Mutex(b, '/dg/acquire').acquire({ timeout: ROUND_TRIPS_MS });
    await eventually(async () => (await zk.children('/dg/acquire')).length === 2, ROUND_TRIPS_MS, 'the waiter queued');
    await sleep(200);
    const releasedAt = performance.now();
    await holder.release();
    const lease = await waiting;
    log.stop();
    await lease.release();
    // The holder's four events, then the waiter's.
    const waiter = log.seen.slice(4);
    assert.deepEqual(waiter.map((s) => s.event), ['start', 'end', 'asyncStart', 'asyncEnd']);
    assert.deepEqual(waiter[0]!.message, { lockPath: '/dg/acquire', kind: 'mutex', layout: 'curator' });
    const done = waiter[3]!.message;
    assert.equal(done.queuePosition, 1, 'one contender ahead');
    assert.ok(done.waitTime! >= releasedAt - calledAt, `waited ${done.waitTime} ms, at least until the release ${releasedAt - calledAt} ms in`);
    assert.equal(done.node, lease.node);
    assert.equal(done.fencingToken, lease.fencingToken.toString());
    assert.equal(done.sessionId, hex(lease.sessionId));
    assert.equal(done.result, lease);
    const first = log.seen.find((s) => s.event === 'asyncEnd' && s.message.node === holder.node)!.message;
    assert.equal(first.queuePosition, 0, 'the holder found nobody ahead');
    // Every field but result (and error) is JSON-safe; the Lease is not (its ids are bigints).
    const { result, ...fields } = done;
    assert.doesNotThrow(() => JSON.stringify(fields));
    assert.throws(() => JSON.stringify({ result }), TypeError);
  });

  it('tryAcquire on a taken mutex or read lock ends with a null result, not an error', async () => {
    const log = channelLog<AcquireMessage>(acquireChannel, under('/dg/try'));
    const [a, b] = [await zk.client(), await zk.client()];
    const holders = [await new Mutex(a, '/dg/try/m').acquire(), await new ReadWriteLock(a, '/dg/try/rw').writeLock.acquire()];
    const before = log.seen.length;
    assert.equal(await new Mutex(b, '/dg/try/m').tryAcquire(), null);
    assert.equal(await new ReadWriteLock(b, '/dg/try/rw').readLock.tryAcquire(), null);
    log.stop();
    for (const lease of holders) await lease.release();
    const tries = log.seen.slice(before);
    const events = ['start', 'end', 'asyncStart', 'asyncEnd'];
    assert.deepEqual(tries.map((s) => `${s.event} ${s.message.kind}`), [...events.map((e) => `${e} mutex`), ...events.map((e) => `${e} read`)]);
    for (const done of [tries[3]!.message, tries[7]!.message]) {
      assert.equal(done.result, null);
      assert.equal(done.error, undefined);
      assert.equal(done.errorCode, undefined);
    }
    await zk.assertNoNodes('/dg/try/m');
  });

  it("a multi-lock's tryAcquire is traced as kind 'multi' around its locks' tries: the lease, or null when one is taken", async () => {
    const log = channelLog<AcquireMessage>(acquireChannel, under('/dg/multi-try'));
    const [a, b] = [await zk.client(), await zk.client()];
    const multi = (client: typeof a): MultiLock => new MultiLock([new Mutex(client, '/dg/multi-try/m1'), new Mutex(client, '/dg/multi-try/m2')]);
    const lease = await multi(a).tryAcquire();
    assert.ok(lease, 'both locks were free');
    assert.equal(await multi(b).tryAcquire(), null);
    log.stop();
    await lease.release();
    const done = log.seen.filter((s) => s.event === 'asyncEnd');
    assert.deepEqual(
      done.map((s) => `${s.message.result === null ? 'null' : s.message.errorCode ?? 'held'} ${s.message.kind} ${s.message.lockPath}`),
      ['held mutex /dg/multi-try/m1', 'held mutex /dg/multi-try/m2', 'held multi /dg/multi-try/m1', 'null mutex /dg/multi-try/m1', 'null multi /dg/multi-try/m1'],
    );
    assert.equal(done[2]!.message.result, lease);
    assert.equal(done[4]!.message.error, undefined);
    await zk.assertNoNodes('/dg/multi-try/m1');
    await zk.assertNoNodes('/dg/multi-try/m2');
  });

  it("acquire: a waiter that queues again after its session expired keeps its first listing's queue position", async () => {
    const log = channelLog<AcquireMessage>(acquireChannel, under('/dg/requeue'));
    const holder = await new Mutex(await zk.client(), '/dg/requeue').acquire();
    const giveUp = new AbortController();
    const second = new Mutex(await zk.client(), '/dg/requeue').acquire({ signal: giveUp.signal }).catch(() => undefined);
    await eventually(async () => (await zk.children('/dg/requeue')).length === 2, ROUND_TRIPS_MS, 'the second queued');
    const { client, proxy } = await zk.viaProxy({ sessionTimeout: 1200 });
    const third = new Mutex(client, '/dg/requeue').acquire({ timeout: 4 * sessionBound(client.sessionTimeout) });
    await eventually(async () => (await zk.children('/dg/requeue')).length === 3, ROUND_TRIPS_MS, 'the third queued, two ahead');
    // Its first listing answered before the cut: it watches the second's node only after reading
    // that listing. A node on the server is not enough: a listing still on its way when the cut
    // began is lost, and the first listing came after the second gave up (one ahead).
    const [, secondNode] = (await zk.children('/dg/requeue')).map((name) => `/dg/requeue/${name}`).sort((a, b) => seqOf(a) - seqOf(b));
    await eventually(async () => (await serverWatches(zk.server, client.sessionId)).includes(secondNode!), ROUND_TRIPS_MS, 'the third watches the second');
    // Cut off until the server expires its session; the second gives up meanwhile: queued again, it has one ahead.
    proxy.blackhole('both');
    giveUp.abort();
    await second;
    await eventually(async () => (await zk.children('/dg/requeue')).length === 1, sessionBound(client.sessionTimeout), 'the server expired the third');
    proxy.passThrough();
    await eventually(async () => (await zk.children('/dg/requeue')).length === 2, sessionBound(client.sessionTimeout), 'the third queued again');
    await holder.release();
    const lease = await third;
    log.stop();
    await lease.release();
    const done = log.seen.find((s) => s.event === 'asyncEnd' && s.message.node === lease.node)!.message;
    assert.equal(done.queuePosition, 2, 'two ahead in its first listing');
    assert.equal(done.sessionId, hex(lease.sessionId));
  });

  it('acquire: a timeout is published on error with its code and the time waited', async () => {
    const log = channelLog<AcquireMessage>(acquireChannel, under('/dg/timeout'));
    const holder = await new Mutex(await zk.client(), '/dg/timeout').acquire();
    const waiter = await zk.client();
    await assert.rejects(new Mutex(waiter, '/dg/timeout').acquire({ timeout: 300 }), isLockError('LOCK_TIMEOUT'));
    log.stop();
    await holder.release();
    const failed = log.seen.filter((s) => s.event === 'error');
    assert.equal(failed.length, 1);
    assert.equal(failed[0]!.message.errorCode, 'LOCK_TIMEOUT');
    assert.ok(failed[0]!.message.waitTime! >= 300, `waited ${failed[0]!.message.waitTime} ms`);
    assert.equal(failed[0]!.message.queuePosition, 1);
    assert.ok(isLockError('LOCK_TIMEOUT')(failed[0]!.message.error));
  });

  it('release: traced with the hold time; a second release is traced as an error', async () => {
    const log = channelLog<ReleaseMessage>(releaseChannel, under('/dg/release'));
    const client = await zk.client();
    const lease = await new Mutex(client, '/dg/release').acquire();
    const heldAt = performance.now();
    await sleep(200);
    const releasing = performance.now();
    await lease.release();
    await assert.rejects(lease.release(), isLockError('ALREADY_RELEASED'));
    log.stop();
    assert.deepEqual(log.seen.map((s) => s.event), ['start', 'end', 'asyncStart', 'asyncEnd', 'start', 'end', 'error', 'asyncStart', 'asyncEnd']);
    const { holdTime, ...rest } = log.seen[0]!.message;
    assert.ok(holdTime! >= releasing - heldAt, `held ${holdTime} ms`);
    assert.deepEqual(rest, { lockPath: '/dg/release', kind: 'mutex', node: lease.node, fencingToken: lease.fencingToken.toString(), sessionId: hex(client.sessionId) });
    await zk.assertNoNodes('/dg/release');
  });

  it('lost: a node deleted by someone else is told with NODE_DELETED even if nobody looks at the lease', async () => {
    const log = channelLog<LostMessage>(lostChannel, under('/dg/lost'));
    const client = await zk.client();
    const lease = await new Mutex(client, '/dg/lost').acquire();
    await zk.admin.delete(lease.node);
    await eventually(() => log.seen.length === 1, ROUND_TRIPS_MS, 'the loss published');
    log.stop();
    const { holdTime, message, ...rest } = log.seen[0]!.message;
    assert.ok(holdTime! >= 0 && message.length > 0);
    assert.deepEqual(rest, { lockPath: '/dg/lost', kind: 'mutex', node: lease.node, fencingToken: lease.fencingToken.toString(), sessionId: hex(client.sessionId), reason: 'NODE_DELETED' });
    assert.equal(lease.held, false);
    // Its release afterwards says the lease was lost first.
    const releases = channelLog<ReleaseMessage>(releaseChannel, under('/dg/lost'));
    await lease.release();
    releases.stop();
    assert.equal(releases.seen[0]!.message.lostReason, 'NODE_DELETED');
  });

  it('lost: a holder cut off past its session timeout is told so, once', async () => {
    const log = channelLog<LostMessage>(lostChannel, under('/dg/expired'));
    const { client, proxy } = await zk.viaProxy({ sessionTimeout: 1200 });
    const lease = await new Mutex(client, '/dg/expired').acquire();
    proxy.blackhole('both');
    await eventually(() => log.seen.length > 0, sessionBound(client.sessionTimeout), 'the loss published');
    await sleep(sessionBound(client.sessionTimeout) / 4);
    proxy.passThrough();
    await eventually(async () => (await zk.children('/dg/expired')).length === 0, sessionBound(client.sessionTimeout), 'the server removed the node');
    log.stop();
    assert.equal(log.seen.length, 1, 'told once');
    assert.ok(['SESSION_MAY_HAVE_EXPIRED', 'SESSIONEXPIRED'].includes(log.seen[0]!.message.reason), log.seen[0]!.message.reason);
    assert.equal(log.seen[0]!.message.node, lease.node);
    await lease.release().catch(() => undefined);
  });

  it('revocation: a request to a revocable holder is published with its lease', async () => {
    const log = channelLog<LeaseMessage>(revocationChannel, under('/dg/revoke'));
    const lease = await new Mutex(await zk.client(), '/dg/revoke', { revocable: true }).acquire();
    assert.equal(await requestRevocation(zk.admin, lease.node), true);
    await eventually(() => log.seen.length === 1, ROUND_TRIPS_MS, 'the request published');
    log.stop();
    assert.equal(log.seen[0]!.message.node, lease.node);
    assert.equal(log.seen[0]!.message.kind, 'mutex');
    await lease.release();
  });

  it("a semaphore's internal queue lock publishes nothing; a lost subscriber costs no request (every lease watches its node from the hand-out)", async () => {
    const client = await zk.client();
    const session = hex(client.sessionId);
    /** getData requests of one acquire/tryAcquire/release round on `path`, and what the lock channels told of it. */
    const round = async (path: string, subscribed: boolean): Promise<{ reads: number; events: string[] }> => {
      const logs = subscribed ? [channelLog<AcquireMessage>(acquireChannel, under(path)), channelLog<ReleaseMessage>(releaseChannel, under(path)), channelLog<LostMessage>(lostChannel, under(path))] : [];
      const reads = channelLog<RequestMessage>(requestChannel, (m) => m.sessionId === session && m.op === 'getData' && m.path?.startsWith(`${path}/`) === true);
      const semaphore = new Semaphore(client, path, 2);
      const lease = await semaphore.acquire();
      const second = await semaphore.tryAcquire();
      assert.ok(second, 'a second slot is free');
      await second.release();
      await lease.release();
      for (const log of [...logs, reads]) log.stop();
      const events = logs.flatMap((log) => log.seen.filter((s) => s.event === 'asyncEnd' || s.event === 'publish').map((s) => `${s.event} ${s.message.lockPath}`));
      return { reads: reads.seen.filter((s) => s.event === 'start').length, events };
    };
    const quiet = await round('/dg/sem-quiet', false);
    const traced = await round('/dg/sem', true);
    assert.deepEqual(traced.events, Array<string>(4).fill('asyncEnd /dg/sem'), 'two acquires, two releases, of the semaphore alone');
    assert.equal(traced.reads, quiet.reads, `the same reads (${quiet.reads} unsubscribed, ${traced.reads} subscribed)`);
    await zk.assertNoNodes('/dg/sem/leases');
  });

  it('every recipe names its kind; a multi-lock contains its locks', async () => {
    const log = channelLog<AcquireMessage>(acquireChannel, under('/dg/kinds'));
    const client = await zk.client();
    const rw = new ReadWriteLock(client, '/dg/kinds/rw');
    const leases = [
      await rw.readLock.acquire(),
      await new SimpleLock(client, '/dg/kinds/simple').acquire(),
      await new Semaphore(client, '/dg/kinds/sem', 2).acquire(),
      await new MultiLock([new Mutex(client, '/dg/kinds/m1'), rw.writeLock]).acquire({ timeout: 500 }).catch(() => undefined),
      await new MultiLock([new Mutex(client, '/dg/kinds/m1'), new Mutex(client, '/dg/kinds/m2')]).acquire(),
    ];
    log.stop();
    for (const lease of leases) await lease?.release();
    // asyncEnd ends every acquire; a failed one had its error event first.
    const done = log.seen.filter((s) => s.event === 'asyncEnd').map((s) => `${s.message.errorCode ?? 'held'} ${s.message.kind} ${s.message.lockPath}`);
    assert.deepEqual(done, [
      'held read /dg/kinds/rw',
      'held simple /dg/kinds/simple',
      'held semaphore /dg/kinds/sem',
      'held mutex /dg/kinds/m1',
      'ABORTED write /dg/kinds/rw',
      'LOCK_TIMEOUT multi /dg/kinds/m1',
      'held mutex /dg/kinds/m1',
      'held mutex /dg/kinds/m2',
      'held multi /dg/kinds/m1',
    ]);
  });
});
