import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Lease, LockError, ZooKeeperClient } from '../../src/index.js';
import { MultiLock, Mutex, ReadWriteLock, Semaphore, requestRevocation } from '../../src/index.js';
import { WAITER_TIMEOUT_MS } from '../support/bounds.js';
import type { HoldInterval } from '../support/intervals.js';
import { assertExclusion, mostAtOnce } from '../support/intervals.js';
import { eventually } from '../support/wait.js';
import type { CuratorKind, Target } from './fixtures/curator-peer.js';
import { CuratorPeer } from './fixtures/curator-peer.js';
import { RecipeFixture, holdLoop, sharedNow } from './fixtures.js';

/*
 * zklock against Apache Curator 5.4 (Debian's libcurator-recipes-java) on the same paths, each
 * side in its own process and sessions. Who held when is read from both sides' interval logs on
 * the shared clock; the server's own count of nodes backs them up.
 */

type Language = 'zklock' | 'curator';
const LANGUAGES = ['zklock', 'curator'] as const satisfies readonly Language[];
const other = (language: Language): Language => (language === 'zklock' ? 'curator' : 'zklock');

/** One contender, on either side: it starts acquiring, is awaited until it holds, and releases into an interval. */
interface Contender {
  readonly who: string;
  start(): void;
  held(): Promise<void>;
  isHeld(): boolean;
  release(): Promise<HoldInterval>;
  /** A separate non-blocking attempt on the same lock (released at once): could this side have it now? */
  tryAcquire(): Promise<boolean>;
}

describe('interop with Apache Curator on the same lock path', { timeout: 180_000 }, () => {
  let fx: RecipeFixture;
  let curator: CuratorPeer;
  /** zklock's sessions: contenders on different clients, as different services would be. */
  let clients: ZooKeeperClient[];

  before(async () => {
    fx = await RecipeFixture.start();
    [curator, ...clients] = await Promise.all([CuratorPeer.start(fx.server.connectString), fx.client(), fx.client(), fx.client()]);
  });
  after(async () => {
    await curator?.close();
    await fx?.close();
  });

  function zklockContender(who: string, lock: { acquire(o: { timeout: number }): Promise<Lease>; tryAcquire(): Promise<Lease | null> }, exclusive: boolean): Contender {
    let pending: Promise<Lease> | undefined;
    let lease: Lease | undefined;
    let start = 0;
    return {
      who,
      start: () => {
        pending = lock.acquire({ timeout: WAITER_TIMEOUT_MS });
        // Registered before anyone awaits `pending`, so it has run by the time held() returns.
        pending.then(
          (acquired) => {
            start = sharedNow();
            lease = acquired;
          },
          () => undefined,
        );
      },
      held: async () => void (await pending),
      isHeld: () => lease !== undefined,
      release: async () => {
        assert.ok(lease, `${who} holds`);
        const end = sharedNow();
        await lease.release();
        return { who, start, end, exclusive };
      },
      tryAcquire: async () => {
        const tried = await lock.tryAcquire();
        await tried?.release();
        return tried !== null;
      },
    };
  }

  function curatorContender(who: string, target: Target, exclusive: boolean): Contender {
    let id = '';
    return {
      who,
      start: () => (id = curator.hold(target)),
      held: async () => void (await curator.event(id, 'acquired')),
      isHeld: () => curator.has(id, 'acquired'),
      release: () => {
        curator.release(id);
        return curator.holdInterval(id, who, exclusive);
      },
      tryAcquire: () => curator.tryAcquire(target),
    };
  }

  /** A contender of `language` for `kind` on `path`; zklock's on client `n`. */
  function contender(language: Language, kind: CuratorKind, path: string, n: number): Contender {
    const exclusive = kind === 'mutex' || kind === 'write';
    const who = `${language}-${kind}-${n}`;
    if (language === 'curator') return curatorContender(who, { kind, path }, exclusive);
    const client = clients[n]!;
    const lock = kind === 'mutex' ? new Mutex(client, path) : kind === 'read' ? new ReadWriteLock(client, path).readLock : new ReadWriteLock(client, path).writeLock;
    return zklockContender(who, lock, exclusive);
  }

  /** Waits until the server lists `count` contender nodes under `path`: the waiters started have queued. */
  const queued = (path: string, count: number): Promise<void> => eventually(async () => (await fx.children(path)).length === count, undefined, `${count} nodes under ${path}`);

  /** Polls the server's count of children under `path` until stopped; resolves with the most it saw. */
  function sampleChildren(path: string): { stop(): Promise<number> } {
    let running = true;
    let most = 0;
    const sampling = (async () => {
      while (running) {
        most = Math.max(most, (await fx.children(path)).length);
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    return {
      stop: async () => {
        running = false;
        await sampling;
        return most;
      },
    };
  }

  it('runs Apache Curator 5.4, whose clock is the one the zklock side reads', (t) => {
    t.diagnostic(`Apache Curator ${curator.version} (Debian's libcurator-recipes-java)`);
    assert.match(curator.version, /^5\.4\./);
    // The JVM's System.nanoTime read between two of our reads: intervals from both sides compare.
    const { before: ours, peer, after: later } = curator.clockCheck;
    assert.ok(ours <= peer && peer <= later, `Curator's clock ${peer} is not between ours ${ours} and ${later}`);
  });

  for (const first of LANGUAGES) {
    it(`mutex: a ${first} holder keeps the other side out, and its waiters get the lock in queue order across languages`, async () => {
      const path = `/curator-mutex-fifo-${first}`;
      const [holder, waiter, last] = [contender(first, 'mutex', path, 0), contender(other(first), 'mutex', path, 1), contender(first, 'mutex', path, 2)];
      holder.start();
      await holder.held();
      assert.equal(await waiter.tryAcquire(), false, `${other(first)} sees the ${first} holder`);
      waiter.start();
      await queued(path, 2);
      last.start();
      await queued(path, 3);

      const held = await holder.release();
      await waiter.held();
      assert.equal(last.isHeld(), false, `${last.who}, queued behind ${waiter.who}, waits for it`);
      assert.equal(await holder.tryAcquire(), false, `${first} sees the ${other(first)} holder`);
      const handedOver = await waiter.release();
      await last.held();
      const lastHeld = await last.release();

      assertExclusion([held, handedOver, lastHeld]);
      assert.ok(held.end <= handedOver.start && handedOver.end <= lastHeld.start, 'the lock went in queue order');
      await fx.assertNoNodes(path);
    });
  }

  it('mutex: contended loops of three zklock and three Curator sessions never overlap, and every one gets its turns', async () => {
    const path = '/curator-mutex-loop';
    const cycles = 12;
    const nodes = sampleChildren(path);
    const ids = [0, 1, 2].map(() => curator.loop({ kind: 'mutex', path }, cycles));
    const ours = await Promise.all(clients.map((client, n) => holdLoop(new Mutex(client, path), `zklock-${n}`, cycles, true)));
    const theirs = await Promise.all(ids.map((id) => curator.loopIntervals(id, `curator-${id}`, true)));
    assert.ok(await nodes.stop() <= 6, 'each of the six contenders has at most one node on the server');
    for (const intervals of [...ours, ...theirs]) assert.equal(intervals.length, cycles);
    assertExclusion([...ours, ...theirs].flat());
    await fx.assertNoNodes(path);
  });

  for (const first of LANGUAGES) {
    it(`read/write lock: ${first} readers share with ${other(first)} readers; writers on either side exclude both`, async () => {
      const path = `/curator-rw-${first}`;
      const second = other(first);
      const [ourReader, theirReader, theirWriter, ourWriter] = [contender(first, 'read', path, 0), contender(second, 'read', path, 1), contender(second, 'write', path, 2), contender(first, 'write', path, 2)];
      ourReader.start();
      await ourReader.held();
      assert.equal(await theirReader.tryAcquire(), true, `a ${second} reader shares with a ${first} reader`);
      theirReader.start();
      await theirReader.held();
      assert.equal(await theirWriter.tryAcquire(), false, `a ${second} writer waits for the readers`);
      assert.equal(await ourWriter.tryAcquire(), false, `a ${first} writer waits for the readers`);

      theirWriter.start();
      await queued(path, 3);
      const reads = [await ourReader.release(), await theirReader.release()];
      await theirWriter.held();
      assert.equal(await ourReader.tryAcquire(), false, `a ${first} reader waits for the ${second} writer`);
      assert.equal(await ourWriter.tryAcquire(), false, `a ${first} writer waits for the ${second} writer`);
      const write = await theirWriter.release();

      assert.ok(reads[1]!.start < reads[0]!.end, 'the two readers held at once');
      assertExclusion([...reads, write]);
      await fx.assertNoNodes(path);
    });
  }

  it('read/write lock: zklock readers share a downgraded write lease, Curator readers and writers wait until it is released', async () => {
    const path = '/curator-rw-downgrade';
    const rw = new ReadWriteLock(clients[0]!, path);
    const reader = contender('zklock', 'read', path, 1);

    // What each side makes of a downgraded node, with nobody else queued.
    const downgraded = await rw.downgrade(await rw.writeLock.acquire({ timeout: WAITER_TIMEOUT_MS }));
    assert.equal(await reader.tryAcquire(), true, 'a zklock reader shares with the downgraded lease');
    assert.equal(await curator.tryAcquire({ kind: 'read', path }), false, 'a Curator reader still sees a writer');
    assert.equal(await curator.tryAcquire({ kind: 'write', path }), false, 'a Curator writer waits for it');
    await downgraded.release();

    // Queued behind a zklock writer: a Curator reader, a zklock reader, a Curator writer.
    const write = await rw.writeLock.acquire({ timeout: WAITER_TIMEOUT_MS });
    const writeStart = sharedNow();
    const theirReader = contender('curator', 'read', path, 0);
    const theirWriter = contender('curator', 'write', path, 0);
    theirReader.start();
    await queued(path, 2);
    reader.start();
    await queued(path, 3);
    theirWriter.start();
    await queued(path, 4);

    const writeEnd = sharedNow();
    const read = await rw.downgrade(write);
    await reader.held();
    assert.equal(theirReader.isHeld(), false, 'the Curator reader still waits for the downgraded node');
    const ourReads = [await reader.release()];
    assert.equal(theirReader.isHeld(), false, 'the Curator reader waits while the downgraded lease is held');
    const downgradedEnd = sharedNow();
    await read.release();
    ourReads.push({ who: 'zklock-downgraded', start: writeEnd, end: downgradedEnd, exclusive: false });

    await theirReader.held();
    assert.equal(theirWriter.isHeld(), false, 'the Curator writer waits for the Curator reader');
    const theirRead = await theirReader.release();
    await theirWriter.held();
    const theirWrite = await theirWriter.release();

    assert.ok(theirRead.start >= downgradedEnd, 'the Curator reader got in only once the downgraded lease was released');
    assert.ok(theirWrite.start >= downgradedEnd && theirWrite.start >= theirRead.end, 'the Curator writer waited for both');
    assertExclusion([{ who: 'zklock-write', start: writeStart, end: writeEnd, exclusive: true }, ...ourReads, theirRead, theirWrite]);
    await fx.assertNoNodes(path);
  });

  for (const first of LANGUAGES) {
    it(`semaphore: ${first} holders of all the leases keep ${other(first)} out, and a mixed pair fills it for both`, async () => {
      const path = `/curator-sem-${first}`;
      const sem = (n: number): Contender => zklockContender(`zklock-${n}`, new Semaphore(clients[n]!, path, 2), false);
      const theirs = (n: number): Contender => curatorContender(`curator-${n}`, { kind: 'semaphore', path, leases: 2 }, false);
      const side = (language: Language, n: number): Contender => (language === 'zklock' ? sem(n) : theirs(n));

      const full = [side(first, 0), side(first, 1)];
      for (const holder of full) holder.start();
      await Promise.all(full.map((holder) => holder.held()));
      assert.equal(await side(other(first), 2).tryAcquire(), false, `${other(first)} sees both leases taken by ${first}`);
      const firstHolds = await Promise.all(full.map((holder) => holder.release()));

      const mixed = [side(first, 0), side(other(first), 1)];
      for (const holder of mixed) holder.start();
      await Promise.all(mixed.map((holder) => holder.held()));
      for (const language of LANGUAGES) assert.equal(await side(language, 2).tryAcquire(), false, `${language} sees the mixed pair fill the semaphore`);
      const mixedHolds = await Promise.all(mixed.map((holder) => holder.release()));

      assert.equal(mostAtOnce([...firstHolds, ...mixedHolds]), 2);
      await fx.assertNoNodes(`${path}/leases`);
      await fx.assertNoNodes(`${path}/locks`);
    });
  }

  it('semaphore: three zklock and three Curator contenders looping on 2 leases never hold more than 2 at once, and all get turns', async () => {
    const path = '/curator-sem-loop';
    const [leases, cycles] = [2, 10];
    const leaseNodes = sampleChildren(`${path}/leases`);
    const ids = [0, 1, 2].map(() => curator.loop({ kind: 'semaphore', path, leases }, cycles));
    const ours = await Promise.all(clients.map((client, n) => holdLoop(new Semaphore(client, path, leases), `zklock-${n}`, cycles, false)));
    const theirs = await Promise.all(ids.map((id) => curator.loopIntervals(id, `curator-${id}`, false)));
    // Curator creates its lease node before counting (zklock only once a slot is free), so the
    // queue's head may add one node beside the holders while it waits.
    assert.ok((await leaseNodes.stop()) <= leases + 1, 'the server never lists more lease nodes than holders and the queue head');
    for (const intervals of [...ours, ...theirs]) assert.equal(intervals.length, cycles, 'every contender had all its turns');
    const all = [...ours, ...theirs].flat();
    assert.ok(mostAtOnce(all) <= leases, `at most ${leases} holders at once across both sides (saw ${mostAtOnce(all)})`);
    await fx.assertNoNodes(`${path}/leases`);
    await fx.assertNoNodes(`${path}/locks`);
  });

  it("revocation: zklock's request ends a revocable Curator holder, Curator's Revoker reaches a revocable zklock holder, and neither moves the queue", async () => {
    const path = '/curator-revoke';
    const theirs = curator.hold({ kind: 'mutex', path }, { revocable: true });
    const { node } = await curator.event(theirs, 'acquired');
    const acquiring = new Mutex(clients[0]!, path, { revocable: true }).acquire({ timeout: WAITER_TIMEOUT_MS });
    await queued(path, 2);
    assert.equal(await requestRevocation(clients[1]!, String(node)), true);
    await curator.event(theirs, 'revoked');
    const lease = await acquiring;
    const start = sharedNow();
    const revoked = await curator.holdInterval(theirs, 'curator-revoked', true);

    const waiter = contender('curator', 'mutex', path, 0);
    waiter.start();
    await queued(path, 2);
    assert.equal(lease.revocationRequested.aborted, false, 'no request yet');
    await curator.revoke(lease.node);
    await eventually(() => lease.revocationRequested.aborted, undefined, "the zklock lease hears Curator's request");
    assert.equal((lease.revocationRequested.reason as LockError).code, 'REVOCATION_REQUESTED');
    assert.ok(lease.held && !lease.signal.aborted, 'a request, not a release: the zklock lease still holds');
    assert.equal(waiter.isHeld(), false, 'and the Curator waiter still waits for it');
    const end = sharedNow();
    await lease.release();
    await waiter.held();
    const last = await waiter.release();

    assertExclusion([revoked, { who: 'zklock', start, end, exclusive: true }, last]);
    assert.ok(revoked.end <= start && end <= last.start, 'each got the lock only once the one ahead released');
    await fx.assertNoNodes(path);
  });

  it('multi-lock: zklock MultiLocks over two paths and Curator mutexes on each path never overlap on either', async () => {
    const paths = ['/curator-multi-a', '/curator-multi-b'];
    const cycles = 8;
    const ids = paths.flatMap((path) => [0, 1].map(() => ({ path, id: curator.loop({ kind: 'mutex', path }, cycles) })));
    const ours = (await Promise.all(clients.slice(0, 2).map((client, n) => holdLoop(new MultiLock(paths.map((path) => new Mutex(client, path))), `zklock-multi-${n}`, cycles, true)))).flat();
    const theirs = await Promise.all(ids.map(async ({ path, id }) => ({ path, intervals: await curator.loopIntervals(id, `curator-${id}`, true) })));
    for (const path of paths) {
      const onPath = theirs.filter((t) => t.path === path).flatMap((t) => t.intervals);
      assert.equal(onPath.length, 2 * cycles);
      assertExclusion([...ours, ...onPath]);
      await fx.assertNoNodes(path);
    }
    assert.equal(ours.length, 2 * cycles);
  });
});
