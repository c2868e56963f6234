import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ZooKeeperClient } from '../../src/index.js';
import { ZooKeeperClient as Client, ZooKeeperError } from '../../src/index.js';
import { ROUND_TRIPS_MS, sessionBound } from '../support/bounds.js';
import { eventually } from '../support/wait.js';
import { RecipeFixture, within } from '../recipes/fixtures.js';

/** White-box: the requests the client's session has written and not had answered, and those waiting to be written. */
function load(client: ZooKeeperClient): { inFlight: number; waiting: number } {
  const session = (client as unknown as { session: { outstanding: { length: number }; pending: { waiting: number } } }).session;
  return { inFlight: session.outstanding.length, waiting: session.pending.waiting };
}

/** What `promise` did within the current turn of the event loop: its value, its error, or 'pending'. */
async function atOnce(promise: Promise<unknown>): Promise<unknown> {
  return Promise.race([promise.then((value) => ({ value }), (error: unknown) => error), new Promise((resolve) => setImmediate(() => resolve('pending')))]);
}

/**
 * Backpressure: 1,000,000 getData against a silent server used to be written at once (1.3 GB
 * of heap, seconds of blocked loop; ~2.9 M crashed the process). Now at most maxInFlight go out,
 * the rest wait in order, at most maxQueued of them, and the socket's own backpressure is heeded.
 */
describe('requests in flight and queued', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  it('only maxInFlight are written; the rest wait in call order, and a connection loss fails them with those in flight, unsent', async () => {
    const { client, proxy } = await zk.viaProxy({ maxInFlight: 10 });
    await client.create('/inflight');
    proxy.blackhole('downstream');
    const calls = Array.from({ length: 100 }, (_, i) => client.create('/inflight/n-', String(i), { mode: 'PERSISTENT_SEQUENTIAL' }));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(load(client), { inFlight: 10, waiting: 90 });
    await eventually(async () => (await zk.children('/inflight')).length === 10, ROUND_TRIPS_MS, 'the server runs the ten');
    assert.deepEqual(load(client), { inFlight: 10, waiting: 90 });

    // The replies to the ten are lost with the connection: they fail (outcome unknown), and so do
    // the ninety asked before the loss, unsent (see ordering.test.ts).
    proxy.resetAll();
    proxy.passThrough();
    const outcomes = await within(Promise.allSettled(calls), sessionBound(client.sessionTimeout), 'every request settles');
    outcomes.forEach((o, i) => {
      assert.ok(o.status === 'rejected' && o.reason instanceof ZooKeeperError && o.reason.code === 'CONNECTIONLOSS', `request ${i}: ${o.status}`);
      assert.match((o.reason as Error).message, i < 10 ? /outcome of the request is unknown/ : /not sent/);
    });
    assert.deepEqual(load(client), { inFlight: 0, waiting: 0 });
    // Answered on the next connection, so nothing of the hundred is still to run.
    await client.sync('/inflight');
    assert.equal((await zk.children('/inflight')).length, 10);
  });

  it('requests that timed out behind a head that does not move still count toward maxQueued, so their memory is bounded too', async () => {
    const { client, proxy } = await zk.viaProxy({ maxInFlight: 1, maxQueued: 10 });
    proxy.blackhole('downstream');
    // One in flight, and one waiting with no timeout of its own: the head of the queue stays put.
    const stuck = [client.getData('/'), client.getData('/')].map((p) => p.catch(() => undefined));
    let refused: ZooKeeperError | undefined;
    for (let i = 0; i < 100 && !refused; i++) {
      const outcome = await client.getData('/', { timeout: 1 }).then(
        () => undefined,
        (error: unknown) => error,
      );
      if (outcome instanceof ZooKeeperError && outcome.code === 'OVERLOADED') refused = outcome;
      else assert.ok(outcome instanceof ZooKeeperError && outcome.code === 'TIMEOUT', `timed out while queued: ${String(outcome)}`);
    }
    assert.ok(refused, 'OVERLOADED once maxQueued requests are held, timed out or not');
    proxy.resetAll();
    proxy.passThrough();
    await within(Promise.all(stuck), sessionBound(client.sessionTimeout), 'the stuck requests settle');
  });

  it('a request beyond maxQueued fails at once with OVERLOADED, naming its op and path; below it requests are taken again', async () => {
    const { client, proxy } = await zk.viaProxy({ maxInFlight: 2, maxQueued: 3 });
    proxy.blackhole('downstream');
    // Two go out and three wait: all five taken in one turn, the free in-flight slots counted.
    const accepted = Array.from({ length: 5 }, () => client.getData('/'));
    const refused = await atOnce(client.getData('/overloaded'));
    assert.ok(refused instanceof ZooKeeperError, `refused at once, got ${String(refused)}`);
    assert.equal(refused.code, 'OVERLOADED');
    assert.equal(refused.op, 'getData');
    assert.equal(refused.path, '/overloaded');
    assert.deepEqual(load(client), { inFlight: 2, waiting: 3 });

    proxy.resetAll();
    proxy.passThrough();
    // Asked before the loss: the two in flight and the three waiting fail with it.
    const outcomes = await within(Promise.allSettled(accepted), sessionBound(client.sessionTimeout), 'the accepted requests settle');
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['rejected', 'rejected', 'rejected', 'rejected', 'rejected'],
    );
    await within(client.getData('/'), ROUND_TRIPS_MS, 'a request once the queue has room');
  });

  it('maxInFlight and maxQueued must be integers (≥ 1 and ≥ 0) or Infinity', () => {
    for (const options of [{ maxInFlight: 0 }, { maxInFlight: 1.5 }, { maxQueued: -1 }, { maxQueued: Number.NaN }]) {
      assert.throws(() => new Client(zk.server.connectString, options), { code: 'INVALID_ARGUMENT' }, JSON.stringify(options));
    }
  });

  it('stops writing while the server does not read: the rest wait in the client, not in the socket, and go out once it reads again', async () => {
    const client = await zk.client({ sessionTimeout: 20_000, maxInFlight: Infinity });
    await client.create('/backpressure', '');
    // 50 MB: more than the kernel's socket buffers hold (a few MB) between us and a stopped server.
    const data = Buffer.alloc(512 * 1024, 1);
    const count = 100;
    await zk.server.pause();
    let writes: Promise<unknown> = Promise.resolve();
    try {
      writes = Promise.all(Array.from({ length: count }, () => client.setData('/backpressure', data)));
      writes.catch(() => undefined); // awaited below; a failure must not surface as unhandled meanwhile
      const socket = (client as unknown as { session: { connection: { socket: { writableLength: number } } } }).session.connection.socket;
      await eventually(() => load(client).waiting > 0 && socket.writableLength > 0, ROUND_TRIPS_MS, 'the client stops writing');
      assert.equal(load(client).inFlight + load(client).waiting, count);
      // What the socket holds: its bound and the one frame that crossed it.
      assert.ok(socket.writableLength <= 256 * 1024 + data.length + 64, `the socket holds ${socket.writableLength} bytes`);
    } finally {
      await zk.server.resume();
    }
    await within(writes, ROUND_TRIPS_MS, 'every write goes out once the server reads again');
    assert.equal((await client.exists('/backpressure'))?.version, count);
  });
});
