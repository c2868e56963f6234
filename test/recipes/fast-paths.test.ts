import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { Lease } from '../../src/index.js';
import { Mutex } from '../../src/index.js';
import { setFastPaths } from '../../src/recipes/queue/fast/switch.js';
import { ROUND_TRIPS_MS } from '../support/bounds.js';
import { eventually, whileProgressing } from '../support/wait.js';
import { RecipeFixture, recordRequests } from './fixtures.js';

/** Past 16 nodes ahead a waiter keeps only its nearest blocker: records answer for those (release-record.ts), the lookahead for the first few. */
const WAITERS = 24;

/** What the fast paths send, counted apart from the plain queue's requests. */
interface Traffic {
  /** Listings sent by a re-acquire of the same Mutex after its own uncontended hold (the sequence proof skips it). */
  reacquireListings: number;
  /** Reads of the lock path's data (release records). */
  lockPathReads: number;
  /** Releases that wrote a record (a multi: setData on the lock path and delete). */
  recordWrites: number;
  /** Watches set on contender nodes, beyond one per waiter (the lookahead follows a second one). */
  extraWatches: number;
}

/**
 * A Mutex acquired, released and acquired again on its own; then a holder and WAITERS waiters on
 * one client (each its own Mutex), the queue handed down to its end. Counts, from the requests
 * the clients send (zklock:client:request), what only a fast path sends.
 */
async function traffic(zk: RecipeFixture, lockPath: string): Promise<Traffic> {
  const alone = await zk.client();
  const aloneSent = recordRequests(alone);
  const mutex = new Mutex(alone, lockPath);
  await (await mutex.acquire({ timeout: ROUND_TRIPS_MS })).release();
  const before = aloneSent.length;
  await (await mutex.acquire({ timeout: ROUND_TRIPS_MS })).release();
  const reacquireListings = aloneSent.slice(before).filter((r) => r === `getChildren ${lockPath}`).length;

  const holderClient = await zk.client();
  const waiterClient = await zk.client();
  const holderSent = recordRequests(holderClient);
  const waiterSent = recordRequests(waiterClient);
  const holder = await new Mutex(holderClient, lockPath).acquire({ timeout: ROUND_TRIPS_MS });
  let held = 0;
  const done = Array.from({ length: WAITERS }, async () => {
    const lease: Lease = await new Mutex(waiterClient, lockPath).acquire({ timeout: WAITERS * ROUND_TRIPS_MS });
    held++;
    await lease.release();
  });
  await eventually(async () => (await zk.children(lockPath)).length === WAITERS + 1, ROUND_TRIPS_MS, 'everyone queued');
  await holder.release();
  await whileProgressing(Promise.all(done), () => held, 'the queue drained');
  await zk.assertNoNodes(lockPath);
  const all = [...holderSent, ...waiterSent];
  return {
    reacquireListings,
    lockPathReads: all.filter((r) => r === `getData ${lockPath}`).length,
    recordWrites: all.filter((r) => r === 'multi').length,
    // The holder's lease watches its own node with a getData: only the waiters' are counted, whose leases take over the watch they had while waiting.
    extraWatches: waiterSent.filter((r) => r.startsWith(`getData ${lockPath}/`)).length - WAITERS,
  };
}

/** What fastPaths() answers in a fresh process with ZKLOCK_FAST_PATHS set to `value` (unset when undefined). */
function switchIn(value: string | undefined): string {
  const env = { ...process.env };
  delete env.ZKLOCK_FAST_PATHS;
  if (value !== undefined) env.ZKLOCK_FAST_PATHS = value;
  const module = fileURLToPath(new URL('../../src/recipes/queue/fast/switch.ts', import.meta.url));
  const script = `const { fastPaths } = await import(${JSON.stringify(module)}); console.log(fastPaths())`;
  return execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { env, encoding: 'utf8' }).trim();
}

describe('the fast paths switch (ZKLOCK_FAST_PATHS=off)', () => {
  let zk: RecipeFixture;
  let was: boolean;
  before(async () => {
    zk = await RecipeFixture.start();
    was = setFastPaths(true);
  });
  after(async () => {
    setFastPaths(was);
    await zk?.close();
  });

  it('is read from the environment: off (any case) turns the fast paths off, anything else leaves them on', () => {
    // What `npm test`'s second run (scripts/run-tests.mjs --fast-paths-off) relies on.
    assert.deepEqual([switchIn('off'), switchIn('OFF'), switchIn(undefined), switchIn('on')], ['false', 'false', 'true', 'true']);
  });

  it('on: a re-acquire skips its listing, a long queue is handed down by release records, and waiters near the front follow a second blocker', async () => {
    const seen = await traffic(zk, '/fp/on');
    assert.equal(seen.reacquireListings, 0, 'the sequence proof skipped the listing');
    assert.ok(seen.lockPathReads > 0, 'release records were read');
    assert.ok(seen.recordWrites > 0, 'release records were written');
    assert.ok(seen.extraWatches > 0, 'the lookahead followed a second blocker');
  });

  it('off: the plain queue only: a listing after every create, no release record written or read, one watch per waiter', async () => {
    setFastPaths(false);
    try {
      const seen = await traffic(zk, '/fp/off');
      assert.deepEqual(seen, { reacquireListings: 1, lockPathReads: 0, recordWrites: 0, extraWatches: 0 });
    } finally {
      setFastPaths(true);
    }
  });
});
