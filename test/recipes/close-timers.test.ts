import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Lease, LockLostError, ZooKeeperClient } from '../../src/index.js';
import { Mutex, ZooKeeperError } from '../../src/index.js';
import { ROUND_TRIPS_MS, sessionBound } from '../support/bounds.js';
import { watchTimers } from '../support/live-timers.js';
import { serverWatches } from '../support/server-watches.js';
import { eventually } from '../support/wait.js';
import { RecipeFixture, within } from './fixtures.js';
import { scheduledCount } from '../../src/recipes/support/deadline-clock.js';

/** Short enough for a test: the hold is over at once, and what is left is the forced release's long grace. */
const MAX_HOLD = 300;

/**
 * Delays no other timer of this process has (watchTimers tells timers apart by their delay),
 * each far longer than any test: a timer of theirs still live after the client closed is one the
 * close left behind.
 */
const HOLD = 987_001;
const GRACE = 876_002;
const EXPIRED_GRACE = 765_003;
const LOCK_DELAY = 654_004;
const DELAY_TIMEOUT = 543_005;
const WAIT_TIMEOUT = 432_006;
const PARTITION_GRACE = 321_007;
const DELETED_GRACE = 210_008;
const UNWATCHED_GRACE = 265_009;
/** A forced release armed when a stall ran the session's proof out before the hold was over: due at the hold's end plus the grace. */
const HOLD_THEN_GRACE = HOLD + GRACE;
/** The timers of locks and leases; an acquire's timeout is not one of its own but a slot on the deadline clock (see scheduledCount). */
const ALL = [HOLD, HOLD_THEN_GRACE, EXPIRED_GRACE, LOCK_DELAY];
/** How far short of its delay a timer of ours may be found (see live()): far less than the ~111 s between the delays above. */
const LATE_MS = 25_000;

/**
 * Closing a client leaves nothing behind: no timer of a lock or lease it made stays armed (each
 * would keep the lease, the client and its buffers alive until it fired). The timers are
 * unref'd, so process.getActiveResourcesInfo() does not list them: they are watched where they
 * are made (see watchTimers).
 */
describe('closing a client, or losing a lease, leaves no lock timer armed', { timeout: 180_000 }, () => {
  let zk: RecipeFixture;
  let timers: ReturnType<typeof watchTimers>;
  before(async () => {
    zk = await RecipeFixture.start();
    timers = watchTimers();
  });
  after(async () => {
    timers?.stop();
    await zk?.close();
  });

  /**
   * The delays of the timers among `delays` still live. A timer armed as another fires is short of
   * its delay by that one's lateness (the forced release, armed as the hold expires), which a busy
   * machine can make seconds: it counts if at most LATE_MS short. No more: the test's own timeout
   * timer (180 s) lies 30 s below DELETED_GRACE.
   */
  function live(delays: readonly number[]): number[] {
    return delays.flatMap((delay) => timers.live(delay, delay - LATE_MS).map(() => delay));
  }

  /** A lease whose hold expired: its forced release is due `grace` ms later. */
  async function expiredHold(client: ZooKeeperClient, path: string, grace: number): Promise<Lease> {
    const lease = await new Mutex(client, path).acquire({ timeout: ROUND_TRIPS_MS, maxHold: MAX_HOLD, forceReleaseAfter: grace });
    await eventually(() => lease.signal.aborted, MAX_HOLD + ROUND_TRIPS_MS, 'the hold expired');
    // Or a stall of a third of the session within the hold ran its proof out first: that too arms the forced release.
    assert.ok(['HOLD_EXPIRED', 'SESSION_MAY_HAVE_EXPIRED'].includes((lease.signal.reason as LockLostError).code), String(lease.signal.reason));
    assert.deepEqual(live([grace]), [grace], 'the forced release is due');
    return lease;
  }

  it('client.close(): a hold not yet over, a forced release due after an expired hold, a lock-delay being served and a waiter\'s deadline all end with it', async () => {
    const client = await zk.client();
    const other = await zk.client();
    const holding = await new Mutex(client, '/close/holding').acquire({ timeout: ROUND_TRIPS_MS, maxHold: HOLD, forceReleaseAfter: GRACE });
    await expiredHold(client, '/close/expired', EXPIRED_GRACE);
    // A lock path never made: nothing proves a clean handoff, so the acquire holds its node for the delay.
    const delaying = new Mutex(client, '/close/delay', { lockDelay: LOCK_DELAY }).acquire({ timeout: DELAY_TIMEOUT });
    const taken = await new Mutex(other, '/close/wait').acquire({ timeout: ROUND_TRIPS_MS });
    const waiting = new Mutex(client, '/close/wait').acquire({ timeout: WAIT_TIMEOUT });
    const rejections = [delaying, waiting].map((acquiring) => assert.rejects(acquiring, (error) => error instanceof ZooKeeperError && error.code === 'CLOSED'));
    await eventually(() => live([LOCK_DELAY]).length === 1, ROUND_TRIPS_MS, 'the lock-delay being served');
    await eventually(async () => (await zk.children('/close/wait')).length === 2, ROUND_TRIPS_MS, 'the waiter queued');
    const armed = live(ALL);
    // The bound, or, had a stall run the session's proof out meanwhile (SESSION_MAY_HAVE_EXPIRED), the forced release after it.
    assert.ok(armed.includes(HOLD) || armed.includes(HOLD_THEN_GRACE), `the hold's timer is armed: ${armed.join(', ')}`);
    assert.deepEqual(armed.filter((delay) => delay !== HOLD && delay !== HOLD_THEN_GRACE).sort(), [EXPIRED_GRACE, LOCK_DELAY].sort(), 'every other timer armed before the close');
    // The two pending acquires' timeouts (DELAY_TIMEOUT, WAIT_TIMEOUT); the others' went when they acquired.
    assert.equal(scheduledCount(), 2, 'the pending acquires\' deadlines are on the clock');

    await client.close();
    await within(Promise.all(rejections), ROUND_TRIPS_MS, 'the pending acquires reject with CLOSED');
    // Gone with the close, not some turns of the event loop later: the 'closed' state ends them.
    assert.deepEqual(live(ALL), [], 'no timer of a lock or lease outlives the client');
    assert.equal(scheduledCount(), 0, 'no deadline of an acquire outlives the client');
    assert.equal(holding.held, false, 'the lease ended with its client');
    await taken.release();
    await zk.assertNoNodes('/close/wait');
    await zk.assertNoNodes('/close/delay');
  });

  it('a forced release still due when the session expires (a partition) is dropped: the server deleted the node with the session', async () => {
    // 4 s: a shorter session could run its proof out on a busy machine before the hold expires.
    const { client, proxy } = await zk.viaProxy({ sessionTimeout: 4000 });
    await expiredHold(client, '/close/partitioned', PARTITION_GRACE);
    const expired = new Promise<void>((resolve) => {
      const unsubscribe = client.onState((event) => event === 'expired' && (unsubscribe(), resolve()));
    });
    proxy.blackhole('both');
    await within(expired, sessionBound(client.sessionTimeout), 'the client concludes its session expired');
    assert.deepEqual(live([PARTITION_GRACE]), [], 'no forced release left for a node the server deleted');
    proxy.passThrough();
    await zk.assertNoNodes('/close/partitioned');
  });

  it('a forced release still due when someone else deletes the node is dropped: there is nothing left to delete', async () => {
    const client = await zk.client();
    const lease = await expiredHold(client, '/close/deleted', DELETED_GRACE);
    // The lease watches its node since the signal was first read: wait until the server has that watch.
    await eventually(async () => (await serverWatches(zk.server, client.sessionId)).includes(lease.node), ROUND_TRIPS_MS, 'the lease watches its node');
    await zk.admin.delete(lease.node);
    await eventually(() => live([DELETED_GRACE]).length === 0, ROUND_TRIPS_MS, 'the forced release dropped once the lease hears of the deletion');
    await lease.release();
    await zk.assertNoNodes('/close/deleted');
  });

  it('a forced release due on a lease nobody looked at is dropped when someone else deletes the node: the node is watched from the expiry on', async () => {
    const client = await zk.client();
    const lease = await new Mutex(client, '/close/unwatched').acquire({ timeout: ROUND_TRIPS_MS, maxHold: MAX_HOLD, forceReleaseAfter: UNWATCHED_GRACE });
    // Not lease.signal nor lease.held: a look would set the node's watch before the expiry.
    await eventually(() => live([UNWATCHED_GRACE]).length === 1, MAX_HOLD + ROUND_TRIPS_MS, 'the hold expired and its forced release is due');
    await zk.admin.delete(lease.node);
    await eventually(() => live([UNWATCHED_GRACE]).length === 0, ROUND_TRIPS_MS, 'the forced release dropped once the node is gone');
    assert.equal((lease.signal.reason as LockLostError).code, 'HOLD_EXPIRED');
    await lease.release();
    await zk.assertNoNodes('/close/unwatched');
  });
});
