import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Lease, WatchMessage } from '../../src/index.js';
import { Mutex, watchChannel } from '../../src/index.js';
import { ROUND_TRIPS_MS } from '../support/bounds.js';
import { eventually, whileProgressing } from '../support/wait.js';
import { RecipeFixture } from './fixtures.js';
import { dataWatchesOf } from './lock-factories.js';

/** Clients, each closed as it hears that the lock it waits for is free. */
const CLIENTS = 20;

describe('closing a client while its acquire is pending (issue 25 item 12)', { timeout: 300_000 }, () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  it(`of ${CLIENTS} clients closed as they hear their lock is free, none is handed a lease once close() began: each acquire gets its lease before, or rejects with CLOSED`, async () => {
    const paths = Array.from({ length: CLIENTS }, (_, i) => `/close-pending/${i}`);
    const holder = await zk.client();
    const held = await Promise.all(paths.map((path) => new Mutex(holder, path).acquire()));
    const clients = await Promise.all(paths.map(() => zk.client()));
    type Outcome = { lease: Lease; closing: boolean } | { error: unknown };
    let settled = 0;
    const outcomes: Promise<Outcome>[] = clients.map((client, i) =>
      new Mutex(client, paths[i]!)
        .acquire()
        // Read as it resolves: close() is called as a notification is read (an I/O callback), never between the hand-out and this (microtasks).
        .then(
          (lease): Outcome => ({ lease, closing: client.closing }),
          (error: unknown): Outcome => ({ error }),
        )
        .finally(() => settled++),
    );
    // Watching its holder's node: only then does its holder's release reach it as a notification.
    await eventually(async () => (await Promise.all(clients.map((client) => dataWatchesOf(zk.server, client.sessionId)))).every((watches) => watches.length > 0), ROUND_TRIPS_MS, 'every waiter watching');
    // Each waiter's client closes the moment the server tells it that the holder's node went (the
    // notification is published before any watcher hears it): its acquire then learns that it
    // holds the lock, with nothing left to ask the server, after its client's close() began.
    const closes: Promise<void>[] = [];
    const onWatch = (message: unknown): void => {
      const { type, sessionId } = message as WatchMessage;
      const client = clients.find((c) => `0x${c.sessionId.toString(16)}` === sessionId);
      if (type === 'deleted' && client && !client.closing) closes.push(client.close());
    };
    watchChannel.subscribe(onWatch);
    try {
      await Promise.all(held.map((lease) => lease.release()));
      await eventually(() => closes.length === CLIENTS, ROUND_TRIPS_MS, 'every waiter heard its holder go');
    } finally {
      watchChannel.unsubscribe(onWatch);
    }
    await Promise.all(closes);
    const results = await whileProgressing(Promise.all(outcomes), () => settled, 'the acquires settle');
    const late = results.filter((outcome) => 'lease' in outcome && outcome.closing).length;
    const unaborted = results.filter((outcome) => 'lease' in outcome && !outcome.lease.signal.aborted).length;
    const otherErrors = results.flatMap((outcome) => ('error' in outcome && (outcome.error as { code?: string }).code !== 'CLOSED' ? [String(outcome.error)] : []));
    const leases = results.filter((outcome) => 'lease' in outcome).length;
    console.log(`${leases} leases handed out (${late} after close() began, ${unaborted} with a signal not aborted after the close), ${results.length - leases} acquires rejected`);
    assert.equal(late, 0, 'no lease is handed out once its client began to close');
    assert.equal(unaborted, 0, 'every lease of a closed client has its signal aborted');
    assert.deepEqual(otherErrors, [], 'every acquire that got no lease rejects with CLOSED');
  });
});
