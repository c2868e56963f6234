import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Lease } from '../../src/index.js';
import { Mutex } from '../../src/index.js';
import { ROUND_TRIPS_MS } from '../support/bounds.js';
import { eventually, whileProgressing } from '../support/wait.js';
import { RecipeFixture, sleep } from './fixtures.js';

/** Clients, each closed as the lock it waits for is handed to it. */
const CLIENTS = 100;

describe('closing a client while its acquire is pending (issue 25 item 12)', { timeout: 300_000 }, () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  it(`of ${CLIENTS} clients closed as their lock is handed to them, none is handed a lease once close() began: each acquire gets its lease before, or rejects with CLOSED`, async () => {
    const paths = Array.from({ length: CLIENTS }, (_, i) => `/close-pending/${i}`);
    const holder = await zk.client();
    const held = await Promise.all(paths.map((path) => new Mutex(holder, path).acquire()));
    const clients = await Promise.all(paths.map(() => zk.client()));
    type Outcome = { lease: Lease; closing: boolean } | { error: unknown };
    let settled = 0;
    const outcomes: Promise<Outcome>[] = clients.map((client, i) =>
      new Mutex(client, paths[i]!)
        .acquire()
        // Read as it resolves: the client's close() is called from timers, so none can come between the hand-out and this.
        .then(
          (lease): Outcome => ({ lease, closing: client.closing }),
          (error: unknown): Outcome => ({ error }),
        )
        .finally(() => settled++),
    );
    await eventually(async () => (await Promise.all(paths.map((path) => zk.children(path)))).every((children) => children.length === 2), ROUND_TRIPS_MS, 'every waiter queued');
    // Each holder lets go, and its waiter's client closes a moment later: spread over the few
    // round trips in which the waiter learns that it holds the lock and hands its lease out.
    const closes: Promise<void>[] = [];
    await Promise.all(
      clients.map(async (client, i) => {
        await held[i]!.release();
        await sleep((i % 10) * 0.5);
        closes.push(client.close());
      }),
    );
    await Promise.all(closes);
    const results = await whileProgressing(Promise.all(outcomes), () => settled, 'the acquires settle');
    const late = results.filter((outcome) => 'lease' in outcome && outcome.closing).length;
    const unaborted = results.filter((outcome) => 'lease' in outcome && !outcome.lease.signal.aborted).length;
    const otherErrors = results.flatMap((outcome) => ('error' in outcome && (outcome.error as { code?: string }).code !== 'CLOSED' ? [String(outcome.error)] : []));
    const leases = results.filter((outcome) => 'lease' in outcome).length;
    console.log(`${leases} leases handed out before close(), ${results.length - leases} acquires rejected; ${late} handed out after close() began, ${unaborted} with a signal not aborted after the close`);
    assert.equal(late, 0, 'no lease is handed out once its client began to close');
    assert.equal(unaborted, 0, 'every lease of a closed client has its signal aborted');
    assert.deepEqual(otherErrors, [], 'every acquire that got no lease rejects with CLOSED');
  });
});
