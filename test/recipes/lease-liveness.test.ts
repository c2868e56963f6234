import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LockLostError } from '../../src/index.js';
import { Mutex, SimpleLock } from '../../src/index.js';
import { RecipeFixture, sleep } from './fixtures.js';

/**
 * A lease trusts only a proof that the leader heard of the session (connection/liveness-proof.ts).
 * The proof must already stand when a lease begins, and stay fresh while it is held; an earlier
 * version let it go stale on a client that took only short holds, so every later lease was born
 * lost (SESSION_MAY_HAVE_EXPIRED at once).
 */
describe('lease liveness on a healthy connection', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  it('a lease taken on a client idle for longer than its session timeout is held, and stays held', async () => {
    // A lease rightly gives up after a stall of about a third of the session timeout
    // (session-liveness.ts): with 1.5 s, a busy machine's half-second pause of the server or of
    // this process lost the lease (3 runs of 3 side by side). 4 s leaves such pauses room.
    const client = await zk.client({ sessionTimeout: 4000 });
    await sleep(1.5 * client.sessionTimeout);
    for (const lock of [new Mutex(client, '/liveness/idle'), new SimpleLock(client, '/liveness/idle-simple')]) {
      const lease = await lock.acquire({ timeout: 30_000 });
      assert.equal(lease.signal.aborted, false, String(lease.signal.reason));
      // Held for two session timeouts, past any proof the acquire had: the heartbeat keeps it ahead of the margin.
      await sleep(2 * client.sessionTimeout);
      assert.ok(lease.held, `still held: ${String(lease.signal.reason)}`);
      await lease.release();
    }
  });

  it('a stall past the proof shows in held and signal at the first look after it, before the timers that fell due meanwhile have run', async () => {
    const client = await zk.client({ sessionTimeout: 1500 });
    const lease = await new Mutex(client, '/liveness/stalled').acquire({ timeout: 30_000 });
    assert.ok(lease.held);
    // From a timer callback, as a process resumed from SIGSTOP: the lease's own timer, due
    // during the stall, runs only in a later pass of the event loop.
    const seen = await new Promise<{ held: boolean; aborted: boolean }>((resolve) =>
      setTimeout(() => {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, client.sessionTimeout);
        resolve({ held: lease.held, aborted: lease.signal.aborted });
      }, 0),
    );
    assert.deepEqual(seen, { held: false, aborted: true });
    assert.equal((lease.signal.reason as LockLostError).reason, 'SESSION_MAY_HAVE_EXPIRED');
    await lease.release().catch(() => undefined);
  });

  it('many short holds in a row on one client are never reported lost', async () => {
    const client = await zk.client({ sessionTimeout: 1500 });
    const mutex = new Mutex(client, '/liveness/churn');
    const lost: string[] = [];
    const until = Date.now() + 3 * client.sessionTimeout;
    while (Date.now() < until) {
      const lease = await mutex.acquire({ timeout: 30_000 });
      if (lease.signal.aborted) lost.push(String(lease.signal.reason));
      await sleep(20);
      if (!lease.held) lost.push(String(lease.signal.reason));
      await lease.release();
    }
    assert.deepEqual(lost, []);
  });
});
