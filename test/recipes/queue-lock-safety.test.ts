import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import type { AcquireOptions, Lease, ZooKeeperClient , LockError} from '../../src/index.js';
import { LockLostError, MultiLock, Mutex, ReadWriteLock, Semaphore, inspectLock } from '../../src/index.js';
import { runCli } from '../cli/helpers/cli.js';
import { ROUND_TRIPS_MS } from '../support/bounds.js';
import { deferred, eventually } from '../support/wait.js';
import { isLockError, RecipeFixture, within } from './fixtures.js';

/** The rejection of `promise` (a fulfilment fails the test). */
function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => assert.fail(`expected a rejection, got ${String(value)}`),
    (error: unknown) => error,
  );
}

/** The multiRead opcode (protocol/opcodes.ts). */
const MULTI_READ = 22;

/** The opcode of each whole request frame in `chunk` (length, xid, type, ...), as the client writes them. */
function requestTypes(chunk: Buffer): number[] {
  const types: number[] = [];
  for (let at = 0; at + 12 <= chunk.length; at += 4 + chunk.readInt32BE(at)) types.push(chunk.readInt32BE(at + 8));
  return types;
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
}

/** How one recipe joins a queue, for the tests that stage a fault in the queue itself. */
interface QueueRecipe {
  name: string;
  /** The znode whose children are the queue the subject waits in. */
  queue: (path: string) => string;
  /** A contender of the queue that holds or waits ahead of the subject. */
  ahead: (client: ZooKeeperClient, path: string, options: AcquireOptions) => Promise<Lease>;
  subject: (client: ZooKeeperClient, path: string, options: AcquireOptions) => Promise<unknown>;
}

const RECIPES: readonly QueueRecipe[] = [
  {
    name: 'Mutex',
    queue: (path) => path,
    ahead: (client, path, options) => new Mutex(client, path).acquire(options),
    subject: (client, path, options) => new Mutex(client, path).acquire(options),
  },
  {
    name: 'ReadLock',
    queue: (path) => path,
    ahead: (client, path, options) => new ReadWriteLock(client, path).writeLock.acquire(options),
    subject: (client, path, options) => new ReadWriteLock(client, path).readLock.acquire(options),
  },
  {
    name: 'WriteLock',
    queue: (path) => path,
    ahead: (client, path, options) => new ReadWriteLock(client, path).writeLock.acquire(options),
    subject: (client, path, options) => new ReadWriteLock(client, path).writeLock.acquire(options),
  },
  {
    name: 'Semaphore',
    // Its waiters queue on a mutex at <path>/locks.
    queue: (path) => `${path}/locks`,
    ahead: (client, path, options) => new Mutex(client, `${path}/locks`).acquire(options),
    subject: (client, path, options) => new Semaphore(client, path, 1).acquire(options),
  },
  {
    name: 'MultiLock',
    queue: (path) => `${path}/a`,
    ahead: (client, path, options) => new Mutex(client, `${path}/a`).acquire(options),
    subject: (client, path, options) => new MultiLock([new Mutex(client, `${path}/a`), new Mutex(client, `${path}/b`)]).acquire(options),
  },
];

/** Session timeout of the subject's client: its read timeout (two thirds) stays well above the latency staged below. */
const SUBJECT_SESSION = 20_000;
/** The subject's timeout: long enough for it to queue and be woken first. */
const TIMEOUT = 3000;
/** Replies delayed by this from the moment the check goes out: whenever that was, past the deadline. */
const DELAY = TIMEOUT + 2000;

describe('queue lock promises', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  describe('reentrancy (Mutex.runExclusive)', () => {
    it('the outermost runExclusive keeps the node until a re-entered section it left running has ended', async () => {
      const path = '/q/reenter/outlives';
      const mutex = new Mutex(await zk.client(), path);
      const other = new Mutex(await zk.client(), path);
      const otherIn = deferred<number>();
      let nested: Promise<{ start: number; end: number }> | undefined;
      const outer = mutex.runExclusive(() => {
        // Not awaited, so it outlives the outer fn: it was started inside, and counts as inside.
        nested = mutex.runExclusive(async () => {
          const start = performance.now();
          // Ends when the other client gets in (which must not happen meanwhile), or after a while.
          await Promise.race([otherIn.promise, new Promise((resolve) => setTimeout(resolve, 2000))]);
          return { start, end: performance.now() };
        });
      });
      await eventually(() => nested !== undefined, 5000, 'nested section started');
      const otherLease = other.acquire({ timeout: 60_000 }).then((lease) => {
        otherIn.resolve(performance.now());
        return lease;
      });
      const span = await within(nested!, 60_000, 'nested section ends');
      const theirs = await within(otherLease, 60_000, 'the other client acquires after us');
      const at = await otherIn.promise;
      assert.ok(at >= span.end, `two holders: the other client got in ${(span.end - at).toFixed(1)} ms before the re-entered section ended`);
      await within(outer, 10_000, 'outer call returns');
      await theirs.release();
      await zk.assertNoNodes(path);
    });

    it('siblings of a Promise.all inside the section all re-enter at once, on the one node, which goes after the last of them', async () => {
      const path = '/q/reenter/siblings';
      const mutex = new Mutex(await zk.client(), path);
      const gate = deferred<void>();
      let running = 0;
      let most = 0;
      await mutex.runExclusive(async (lease) => {
        const siblings = Array.from({ length: 7 }, () =>
          mutex.runExclusive(async (inner) => {
            assert.equal(inner, lease, 'each sibling re-enters the same lease');
            most = Math.max(most, ++running);
            await gate.promise;
            running--;
          }),
        );
        await eventually(() => running === 7, 5000, 'every sibling inside');
        assert.equal((await zk.children(path)).length, 1, 'one node for all of them');
        gate.resolve();
        await Promise.all(siblings);
      });
      assert.equal(most, 7, 're-entry is by call chain: the siblings ran at once (excluding each other is the caller\'s business)');
      await zk.assertNoNodes(path);
    });

    it('a nested acquire after the section\'s lease was reported lost (the session survived) fails at once with LOCK_LOST, the loss as cause', async () => {
      const path = '/q/reenter/lost';
      const { client, proxy } = await zk.viaProxy({ sessionTimeout: SUBJECT_SESSION });
      const session = client.sessionId;
      // Give up half a session early: the other half is left to heal before the server could expire it.
      const mutex = new Mutex(client, path, { safetyMargin: SUBJECT_SESSION / 2 });
      const failures = await mutex.runExclusive(async (lease) => {
        proxy.blackhole('both');
        await within(aborted(lease.signal), 3 * SUBJECT_SESSION + 5000, 'the lease reports the loss');
        const reason = lease.signal.reason as LockLostError;
        assert.ok(reason instanceof LockLostError && reason.reason === 'SESSION_MAY_HAVE_EXPIRED', String(reason));
        proxy.passThrough();
        // Cut the reconnect attempt stuck in the black hole, so the next one starts now.
        proxy.resetAll();
        await within(client.waitForConnected(), 3 * SUBJECT_SESSION + 5000, 'reconnected');
        assert.equal(client.sessionId, session, 'the session survived (the premise of this test)');
        const exists = await zk.admin.exists(lease.node);
        assert.equal(exists?.ephemeralOwner, session, 'our old node is still there');
        return {
          nested: await within(rejectionOf(mutex.runExclusive(() => 'entered')), 10_000, 'nested runExclusive settles'),
          acquire: await within(rejectionOf(mutex.acquire({ timeout: 60_000 })), 10_000, 'nested acquire settles'),
          tryAcquire: await within(rejectionOf(mutex.tryAcquire()), 10_000, 'nested tryAcquire settles'),
        };
      });
      for (const [call, error] of Object.entries(failures)) {
        assert.ok(isLockError('LOCK_LOST')(error), `${call}: ${String(error)}`);
        const cause = (error as LockError).cause;
        assert.ok(cause instanceof LockLostError && cause.reason === 'SESSION_MAY_HAVE_EXPIRED', `${call}: cause ${String(cause)}`);
      }
      await zk.assertNoNodes(path);
    });
  });

  describe('a deadline passing during the check after a wake', () => {
    /**
     * A holder, then a second contender, then the subject, which watches the second (a writer
     * also follows the holder with a watch of its own). When the second gives up, the subject
     * wakes and checks whether the holder is still there (a multiRead naming the holder goes
     * upstream): at that moment the caller's signal aborts, or the replies are delayed past the
     * subject's timeout.
     */
    async function failDuringCheck(recipe: QueueRecipe, path: string, how: 'timeout' | 'abort'): Promise<unknown> {
      const queue = recipe.queue(path);
      const holder = await recipe.ahead(await zk.client(), path, { timeout: 60_000 });
      const secondGivesUp = new AbortController();
      const second = rejectionOf(recipe.ahead(await zk.client(), path, { signal: secondGivesUp.signal }));
      await eventually(async () => (await zk.children(queue)).length === 2, 10_000, 'second contender queued');
      const holderName = holder.node.slice(holder.node.lastIndexOf('/') + 1);
      const { client, proxy } = await zk.viaProxy({ sessionTimeout: SUBJECT_SESSION });
      const caller = new AbortController();
      let checked = false;
      const unsubscribe = proxy.onChunk((event) => {
        if (checked || event.direction !== 'upstream' || !event.chunk.includes(holderName) || !requestTypes(event.chunk).includes(MULTI_READ)) return;
        checked = true;
        if (how === 'abort') caller.abort(new Error('caller gave up'));
        else proxy.latency('downstream', DELAY);
      });
      const attempt = rejectionOf(recipe.subject(client, path, how === 'abort' ? { signal: caller.signal } : { timeout: TIMEOUT }));
      await eventually(async () => (await zk.children(queue)).length === 3, 10_000, 'subject queued');
      secondGivesUp.abort();
      assert.ok(isLockError('ABORTED')(await within(second, 30_000, 'the second contender gives up')));
      const error = await within(attempt, TIMEOUT + DELAY + 30_000, 'the subject gives up');
      unsubscribe();
      proxy.passThrough();
      assert.ok(checked, 'the subject was woken and checked the queue before its deadline');
      await holder.release();
      await eventually(async () => (await zk.children(queue)).length === 0, 10_000, 'no node left');
      return error;
    }

    for (const recipe of RECIPES) {
      it(`${recipe.name}: a timeout rejects with LockError LOCK_TIMEOUT`, async () => {
        const error = await failDuringCheck(recipe, `/q/check-timeout/${recipe.name}`, 'timeout');
        assert.ok(isLockError('LOCK_TIMEOUT')(error), `${recipe.name}: ${String(error)} (${(error as Error).constructor.name})`);
      });
      it(`${recipe.name}: an abort rejects with LockError ABORTED`, async () => {
        const error = await failDuringCheck(recipe, `/q/check-abort/${recipe.name}`, 'abort');
        assert.ok(isLockError('ABORTED')(error), `${recipe.name}: ${String(error)} (${(error as Error).constructor.name})`);
      });
    }
  });

  it('MultiLock never returns a lease whose node is already gone: it asks the server before returning', async () => {
    const path = '/q/multi-lost';
    const [ours, other] = [await zk.client(), await zk.client()];
    const blocking = await new Mutex(other, `${path}/b`).acquire();
    const acquiring = new MultiLock([new Mutex(ours, `${path}/a`), new Mutex(ours, `${path}/b`)]).acquire({ timeout: 60_000 });
    await eventually(async () => (await zk.children(`${path}/b`)).length === 2, 10_000, 'waiting for b, holding a');
    const [a] = await zk.children(`${path}/a`);
    // An operator frees a while we wait for b: the lease on a is lost before anyone looked at it.
    await zk.admin.delete(`${path}/a/${a!}`);
    await blocking.release();
    const multi = await within(acquiring, 30_000, 'multi-lock acquires');
    for (const lease of multi.leases) {
      const stat = await zk.admin.exists(lease.node);
      assert.ok(stat && stat.czxid === lease.fencingToken && stat.ephemeralOwner === ours.sessionId, `${lease.node} is held`);
    }
    assert.ok(multi.held);
    await multi.release();
    await zk.assertNoNodes(`${path}/a`);
    await zk.assertNoNodes(`${path}/b`);
  });

  it('MultiLock never returns a lease whose liveness proof lapsed while the server\'s confirmation sat unread (a process stopped past its session timeout)', async () => {
    // Found by `npm run chaos -- --seed 45`: a worker SIGSTOPped mid-acquire for longer than its
    // session timeout. On SIGCONT the reply to the check was read before any timer ran, and the
    // multi-lease was handed out held while another session already held one of its locks.
    const ours = await zk.client({ sessionTimeout: 1500 });
    const server = zk.server.pid!;
    const original = ours.exists.bind(ours);
    // On a busy machine the reply can beat the staging (the acquire resolves before the stall):
    // that attempt proves nothing and is staged again.
    for (let attempt = 1; ; attempt++) {
      const path = `/q/multi-stalled/${attempt}`;
      let stalled: 'no' | 'pending' | 'done' = 'no';
      // Staged from a timer callback: Node runs the timers that fell due during the stall only
      // after the next socket read, as after a SIGCONT. The server is held for that first
      // millisecond so that its reply arrives during the stall, not before it.
      ours.exists = (node, options) => {
        if (stalled === 'no' && node.startsWith(`${path}/a/`)) {
          stalled = 'pending';
          process.kill(server, 'SIGSTOP');
          setTimeout(() => {
            process.kill(server, 'SIGCONT');
            Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2.5 * ours.sessionTimeout);
            stalled = 'done';
          }, 0);
        }
        return original(node, options);
      };
      const multi = await within(new MultiLock([new Mutex(ours, `${path}/a`), new Mutex(ours, `${path}/b`)]).acquire({ timeout: 30_000 }), 40_000, 'multi-lock acquires');
      // Read at once, before a timer could catch up: what the caller gets must be held.
      const heldOnArrival = multi.held;
      const staged = (stalled as string) === 'done';
      if (!staged && attempt < 5) {
        await eventually(() => (stalled as string) === 'done', ROUND_TRIPS_MS, 'the late stall ended');
        await multi.release().catch(() => undefined);
        continue;
      }
      assert.ok(staged, 'the stall came before the acquire resolved in one of 5 attempts');
      assert.ok(heldOnArrival, `held when handed out: ${String(multi.signal.reason)}`);
      for (const lease of multi.leases) {
        const stat = await zk.admin.exists(lease.node);
        assert.ok(stat && stat.czxid === lease.fencingToken && stat.ephemeralOwner === lease.sessionId, `${lease.node} is ours on the server`);
      }
      await multi.release();
      await zk.assertNoNodes(`${path}/a`);
      await zk.assertNoNodes(`${path}/b`);
      return;
    }
  });

  it('a downgraded writer is a reader everywhere in zklock: tryAcquire shares it, inspection lists it shared, exec --read --try runs', async () => {
    const path = '/q/downgraded';
    const [a, b, c] = [await zk.client(), await zk.client(), await zk.client()];
    const ours = new ReadWriteLock(a, path, { ownerId: 'downgraded' });
    const read = await ours.downgrade(await ours.writeLock.acquire());
    const theirs = await new ReadWriteLock(b, path, { ownerId: 'reader' }).readLock.tryAcquire();
    assert.ok(theirs, 'readLock.tryAcquire gets in beside a downgraded writer');
    assert.equal(await new ReadWriteLock(c, path).writeLock.tryAcquire(), null, 'a writer does not');
    const state = await inspectLock(zk.admin, path);
    assert.deepEqual(
      state.holders.map((h) => ({ node: h.path, kind: h.kind, downgraded: h.downgraded })),
      [
        { node: read.node, kind: 'shared', downgraded: true },
        { node: theirs.node, kind: 'shared', downgraded: undefined },
      ],
    );
    assert.deepEqual(state.waiters, []);
    const env = { ZOOKEEPER_CONNECT: zk.server.connectString };
    const status = await runCli(['status', '--json', path], env);
    assert.equal(status.code, 0, `zklock status: ${status.stderr}`);
    const listed = (JSON.parse(status.stdout) as { holders: { kind: string; owner: { downgraded?: boolean } }[] }).holders;
    assert.deepEqual(
      listed.map((h) => [h.kind, h.owner.downgraded]),
      [
        ['shared', true],
        ['shared', undefined],
      ],
      'zklock status lists the downgraded writer as a shared holder',
    );
    const exec = await runCli(['exec', '--read', '--try', path, '--', process.execPath, '-e', ''], env);
    assert.equal(exec.code, 0, `zklock exec --read --try: ${exec.stderr}`);
    await theirs.release();
    await read.release();
    await zk.assertNoNodes(path);
  });
});
