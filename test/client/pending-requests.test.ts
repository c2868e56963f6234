import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ZooKeeperError } from '../../src/index.js';
import { ROUND_TRIPS_MS, sessionBound } from '../support/bounds.js';
import { nextEvent } from '../support/wait.js';
import { RecipeFixture, within } from '../recipes/fixtures.js';

/** The number of requests the client's session holds for a connection (white-box: what the memory goes to). */
function queued(client: object): number {
  return (client as { session: { pending: { waiting: number } } }).session.pending.waiting;
}

/**
 * Requests made while disconnected wait for the reconnect; those that time out or are aborted
 * meanwhile used to stay queued until a handshake succeeded (200,000 rejected calls kept 342 MiB).
 */
describe('requests waiting for a connection', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  it('leave the queue as soon as they time out or are aborted; the others are sent after the reconnect, in order', async () => {
    const { client, proxy } = await zk.viaProxy({ sessionTimeout: 20_000 });
    await zk.admin.create('/pending', '0');
    const suspended = nextEvent(client, 'suspended', ROUND_TRIPS_MS);
    proxy.refuseNew(true);
    proxy.resetAll();
    await suspended;

    const abort = new AbortController();
    const doomed = [
      ...Array.from({ length: 500 }, (_, i) => client.setData('/pending', String(i), { timeout: 50 })),
      ...Array.from({ length: 500 }, (_, i) => client.setData('/pending', String(i), { signal: abort.signal })),
    ];
    const kept = [client.setData('/pending', 'a'), client.setData('/pending', 'b')];
    abort.abort();
    const outcomes = await within(Promise.allSettled(doomed), ROUND_TRIPS_MS, 'the doomed requests settle');
    assert.ok(outcomes.every((o) => o.status === 'rejected' && o.reason instanceof ZooKeeperError && ['TIMEOUT', 'ABORTED'].includes(o.reason.code)));
    assert.equal(queued(client), kept.length, 'only the requests still waiting are queued');

    const reconnected = nextEvent(client, 'reconnected', sessionBound(client.sessionTimeout));
    proxy.refuseNew(false);
    await reconnected;
    await within(Promise.all(kept), ROUND_TRIPS_MS, 'the waiting requests are sent');
    assert.equal((await zk.admin.getData('/pending')).data.toString(), 'b');
    assert.equal(queued(client), 0);
  });

  it('a terminal expiry fails the waiting requests and leaves no timer of theirs behind', async () => {
    const { client, proxy } = await zk.viaProxy({ renewExpiredSession: false });
    const suspended = nextEvent(client, 'suspended', ROUND_TRIPS_MS);
    proxy.refuseNew(true);
    proxy.resetAll();
    await suspended;
    const waiting = client.getData('/');
    await assert.rejects(within(waiting, sessionBound(client.sessionTimeout), 'the waiting request fails'), { code: 'SESSIONEXPIRED' });
    // White-box: the one timer bounding the queue's wait for a connection.
    assert.equal((client as unknown as { session: { waitTimer: unknown } }).session.waitTimer, undefined);
  });

  it('many requests bounded by one signal share one abort listener: no MaxListenersExceededWarning, and all abort', async () => {
    const client = await zk.client();
    await zk.admin.create('/shared-signal', 'v');
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const shared = new AbortController();
      await Promise.all(Array.from({ length: 30 }, () => client.getData('/shared-signal', { signal: shared.signal })));
      const { proxy, client: cut } = await zk.viaProxy({ sessionTimeout: 20_000 });
      proxy.blackhole('downstream');
      const stuck = Array.from({ length: 30 }, () => cut.getData('/shared-signal', { signal: shared.signal }));
      shared.abort();
      const outcomes = await within(Promise.allSettled(stuck), ROUND_TRIPS_MS, 'the aborted requests settle');
      assert.ok(outcomes.every((o) => o.status === 'rejected' && o.reason instanceof ZooKeeperError && o.reason.code === 'ABORTED'));
      proxy.passThrough();
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(warnings.filter((name) => name === 'MaxListenersExceededWarning'), []);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
