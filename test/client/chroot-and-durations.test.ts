import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LockError, Mutex, ZooKeeperClient } from '../../src/index.js';
import { RecipeFixture, sleep, within } from '../recipes/fixtures.js';

// A few round trips at most, each bounded by the request timeout: generous for a busy machine.
const PROMPT_MS = 30_000;
const LONGEST_TIMER_MS = 2 ** 31 - 1;

function isCode(code: string, mentions?: string): (error: unknown) => boolean {
  return (error) => {
    assert.equal((error as { code?: string }).code, code, String(error));
    if (mentions) assert.ok((error as Error).message.includes(mentions), `"${(error as Error).message}" names ${mentions}`);
    return true;
  };
}

describe('ensurePath under a missing chroot, and durations beyond what a timer can do', () => {
  let zk: RecipeFixture;
  let client: ZooKeeperClient;

  before(async () => {
    zk = await RecipeFixture.start();
    client = await zk.client();
  });
  after(async () => {
    await zk?.close();
  });

  /** A client whose connect string names a chroot that does not exist, counting the creates it sends. */
  async function inMissingChroot(): Promise<{ client: ZooKeeperClient; creates: () => number }> {
    const inChroot = await ZooKeeperClient.connect(`${zk.server.connectString}/missing-chroot`, { sessionTimeout: 10_000 });
    let creates = 0;
    const create = inChroot.create.bind(inChroot);
    inChroot.create = (...args) => {
      creates++;
      return create(...args);
    };
    return { client: inChroot, creates: () => creates };
  }

  it('ensurePath rejects at once with CHROOT_MISSING naming the chroot, and sends nothing more', async () => {
    const { client: inChroot, creates } = await inMissingChroot();
    try {
      await assert.rejects(within(inChroot.ensurePath('/a/b'), PROMPT_MS, 'ensurePath'), isCode('CHROOT_MISSING', '/missing-chroot'));
      // The root of a missing chroot is no more there than its children: "ensured" would be a lie its callers loop on.
      await assert.rejects(within(inChroot.ensurePath('/'), PROMPT_MS, 'ensurePath /'), isCode('CHROOT_MISSING', '/missing-chroot'));
      const after = creates();
      assert.ok(after <= 2, `one create per level of /a/b, got ${after}`);
      await sleep(500);
      assert.equal(creates(), after, 'no create after the rejection');
    } finally {
      await inChroot.close();
    }
  });

  it('ensurePath in an existing chroot creates every missing level and honours its timeout and signal', async () => {
    await zk.admin.create('/present-chroot');
    const inChroot = await ZooKeeperClient.connect(`${zk.server.connectString}/present-chroot`, { sessionTimeout: 10_000 });
    try {
      await inChroot.ensurePath('/', { timeout: PROMPT_MS });
      await inChroot.ensurePath('/x/y/z', { timeout: PROMPT_MS });
      assert.ok(await zk.admin.exists('/present-chroot/x/y/z'));
      await inChroot.ensurePath('/x/y/z');
      await assert.rejects(inChroot.ensurePath('/x/q', { signal: AbortSignal.abort() }), isCode('ABORTED'));
      await assert.rejects(inChroot.ensurePath('/x/q', { timeout: LONGEST_TIMER_MS + 1 }), isCode('INVALID_ARGUMENT', 'timeout'));
      assert.equal(await zk.admin.exists('/present-chroot/x/q'), null);
    } finally {
      await inChroot.close();
    }
  });

  it('rejects a session or request timeout a timer cannot hold with INVALID_ARGUMENT naming it, instead of crashing in the background', () => {
    for (const sessionTimeout of [3.6e9, LONGEST_TIMER_MS + 1, Infinity, NaN, 0, -1]) {
      assert.throws(() => new ZooKeeperClient(zk.server.connectString, { sessionTimeout }), isCode('INVALID_ARGUMENT', 'sessionTimeout'));
    }
    assert.throws(() => new ZooKeeperClient(zk.server.connectString, { requestTimeout: 2 ** 31 }), isCode('INVALID_ARGUMENT', 'requestTimeout'));
  });

  it('rejects a per-call timeout beyond a timer, and waitForConnected one that is not a duration', async () => {
    await assert.rejects(client.getData('/', { timeout: 2 ** 31 }), isCode('INVALID_ARGUMENT', 'timeout'));
    await assert.rejects(client.removeWatcher('/', () => undefined, { timeout: 2 ** 31 }), isCode('INVALID_ARGUMENT', 'timeout'));
    // Not connected (nothing listens on port 1): an overflowing timer would fire at once with TIMEOUT.
    const unconnected = new ZooKeeperClient('127.0.0.1:1');
    try {
      await assert.rejects(unconnected.waitForConnected({ timeout: 2 ** 31 }), isCode('INVALID_ARGUMENT', 'timeout'));
      await assert.rejects(unconnected.waitForConnected({ timeout: NaN }), isCode('INVALID_ARGUMENT', 'timeout'));
    } finally {
      await unconnected.close();
    }
  });

  it('an acquire timeout beyond 2^31-1 ms waits (timers chained) instead of failing at once', async () => {
    const holder = await new Mutex(client, '/long-timeout').acquire();
    const other = await zk.client();
    const abort = new AbortController();
    let settled: unknown;
    const waiting = new Mutex(other, '/long-timeout').acquire({ timeout: 2_160_000_000, signal: abort.signal });
    waiting.then(
      () => (settled = 'acquired'),
      (error: unknown) => (settled = error),
    );
    // A timer that overflowed fires on the next turn of the event loop; a second is plenty to see it.
    await sleep(1000);
    assert.equal(settled, undefined, 'still waiting for the lock');
    abort.abort();
    await assert.rejects(within(waiting, PROMPT_MS, 'abort'), (error) => error instanceof LockError && error.code === 'ABORTED');
    await holder.release();
  });
});
