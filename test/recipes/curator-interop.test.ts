import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Lease, LockError, ZooKeeperClient } from '../../src/index.js';
import { MultiLock, Mutex, ReadWriteLock, Semaphore, requestRevocation } from '../../src/index.js';
import { WAITER_TIMEOUT_MS } from '../support/bounds.js';
import type { HoldInterval } from '../support/intervals.js';
import { assertExclusion, mostAtOnce, sideChanges } from '../support/intervals.js';
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
    // Settled apart, so `after` ends a JVM that started even when a zklock client failed to connect.
    const [peer, sessions] = await Promise.allSettled([CuratorPeer.start(fx.server.connectString), Promise.all([fx.client(), fx.client(), fx.client()])]);
    if (peer.status === 'fulfilled') curator = peer.value;
    if (sessions.status === 'fulfilled') clients = sessions.value;
    for (const started of [peer, sessions]) if (started.status === 'rejected') throw started.reason;
  });
  after(async () => {
    await curator?.close();
    await fx?.close();
  });

  /** A zklock contender; `lease()` is its lease once held. */
  function zklockContender(who: string, lock: { acquire(o: { timeout: number }): Promise<Lease>; tryAcquire(): Promise<Lease | null> }, exclusive: boolean): Contender & { lease(): Lease } {
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
      lease: () => {
        assert.ok(lease, `${who} holds`);
        return lease;
      },
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

  /** A contender of `language` for `kind` on `path` (a semaphore of `leases`); zklock's on client `n`. */
  function contender(language: Language, kind: CuratorKind, path: string, n: number, leases = 2): Contender {
    const exclusive = kind === 'mutex' || kind === 'write';
    const who = `${language}-${kind}-${n}`;
    if (language === 'curator') return curatorContender(who, kind === 'semaphore' ? { kind, path, leases } : { kind, path }, exclusive);
    const client = clients[n]!;
    const locks = { mutex: () => new Mutex(client, path), read: () => new ReadWriteLock(client, path).readLock, write: () => new ReadWriteLock(client, path).writeLock, semaphore: () => new Semaphore(client, path, leases) };
    return zklockContender(who, locks[kind](), exclusive);
  }

  /**
   * Curator loops on `targets` (each on a session of its own) and zklock's loops started by
   * `ours`, all started together once Curator's sessions are connected; each side's holds, loop by loop.
   */
  async function loopTogether(targets: readonly Target[], cycles: number, exclusive: boolean, ours: () => Promise<HoldInterval[]>[]): Promise<{ ours: HoldInterval[][]; theirs: HoldInterval[][] }> {
    const ids = await Promise.all(targets.map((target) => curator.loop(target, cycles)));
    for (const id of ids) curator.go(id);
    const zklock = await Promise.all(ours());
    return { ours: zklock, theirs: await Promise.all(ids.map((id) => curator.loopIntervals(id, `curator-${id}`, exclusive))) };
  }

  /** Whose hold an interval was, for counting how often the lock changed sides. */
  const sideOf = (interval: HoldInterval): Language => (interval.who.startsWith('zklock') ? 'zklock' : 'curator');
  /** Loops that contended hand the lock across many times; ones that ran one after the other, once. */
  const CONTENDED_CHANGES = 2;

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

  it('runs Apache Curator 5.4, whose clock is the one the zklock side reads', async (t) => {
    t.diagnostic(`Apache Curator ${curator.version} (Debian's libcurator-recipes-java)`);
    assert.match(curator.version, /^5\.4\./);
    // The JVM's System.nanoTime read within one round trip of ours: intervals from both sides compare.
    const { before: ours, peer, after: later } = await curator.clockCheck();
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
    const { ours, theirs } = await loopTogether([0, 1, 2].map(() => ({ kind: 'mutex', path })), cycles, true, () =>
      clients.map((client, n) => holdLoop(new Mutex(client, path), `zklock-${n}`, cycles, true)),
    );
    for (const intervals of [...ours, ...theirs]) assert.equal(intervals.length, cycles);
    const all = [...ours, ...theirs].flat();
    assertExclusion(all);
    assert.ok(sideChanges(all, sideOf) >= CONTENDED_CHANGES, `the two sides contended: the lock changed sides ${sideChanges(all, sideOf)} times`);
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
      const side = (language: Language, n: number): Contender => contender(language, 'semaphore', path, n, 2);

      const full = [side(first, 0), side(first, 1)];
      for (const holder of full) holder.start();
      await Promise.all(full.map((holder) => holder.held()));
      assert.equal(await side(other(first), 2).tryAcquire(), false, `${other(first)} sees both leases taken by ${first}`);
      await Promise.all(full.map((holder) => holder.release()));

      const mixed = [side(first, 0), side(other(first), 1)];
      for (const holder of mixed) holder.start();
      await Promise.all(mixed.map((holder) => holder.held()));
      for (const language of LANGUAGES) assert.equal(await side(language, 2).tryAcquire(), false, `${language} sees the mixed pair fill the semaphore`);
      assert.equal((await fx.children(`${path}/leases`)).length, 2, "the server lists both sides' leases in one place");
      await Promise.all(mixed.map((holder) => holder.release()));

      await fx.assertNoNodes(`${path}/leases`);
      await fx.assertNoNodes(`${path}/locks`);
    });
  }

  it('semaphore: three zklock and three Curator contenders looping on 2 leases never hold more than 2 at once, and all get turns', async () => {
    const path = '/curator-sem-loop';
    const [leases, cycles] = [2, 10];
    const leaseNodes = sampleChildren(`${path}/leases`);
    const { ours, theirs } = await loopTogether([0, 1, 2].map(() => ({ kind: 'semaphore', path, leases })), cycles, false, () =>
      clients.map((client, n) => holdLoop(new Semaphore(client, path, leases), `zklock-${n}`, cycles, false)),
    );
    // Curator creates its lease node before counting (zklock only once a slot is free), so the
    // queue's head may add one node beside the holders while it waits.
    assert.ok((await leaseNodes.stop()) <= leases + 1, 'the server never lists more lease nodes than holders and the queue head');
    for (const intervals of [...ours, ...theirs]) assert.equal(intervals.length, cycles, 'every contender had all its turns');
    const all = [...ours, ...theirs].flat();
    assert.ok(mostAtOnce(all) <= leases, `at most ${leases} holders at once across both sides (saw ${mostAtOnce(all)})`);
    assert.ok(sideChanges(all, sideOf) >= CONTENDED_CHANGES, `the two sides contended: the leases changed sides ${sideChanges(all, sideOf)} times`);
    await fx.assertNoNodes(`${path}/leases`);
    await fx.assertNoNodes(`${path}/locks`);
  });

  it("revocation: zklock's request ends a revocable Curator holder, Curator's Revoker reaches a revocable zklock holder, and neither moves the queue", async () => {
    const path = '/curator-revoke';
    const theirs = curator.hold({ kind: 'mutex', path }, { revocable: true });
    const { node } = await curator.event(theirs, 'acquired');
    const ours = zklockContender('zklock', new Mutex(clients[0]!, path, { revocable: true }), true);
    ours.start();
    await queued(path, 2);
    assert.equal(await requestRevocation(clients[1]!, String(node)), true);
    await curator.event(theirs, 'revoked');
    // Curator's listener printed "revoked" before it released: a request that let the waiter in would show here.
    assert.equal(ours.isHeld(), false, 'the zklock waiter still waits when Curator hears the request');
    await ours.held();
    const lease = ours.lease();
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
    const held = await ours.release();
    await waiter.held();
    const last = await waiter.release();

    assertExclusion([revoked, held, last]);
    assert.ok(revoked.end <= held.start && held.end <= last.start, 'each got the lock only once the one ahead released');
    await fx.assertNoNodes(path);
  });

  it('multi-lock: zklock MultiLocks over two paths and Curator mutexes on each path never overlap on either', async () => {
    const paths = ['/curator-multi-a', '/curator-multi-b'];
    const cycles = 8;
    const targets = paths.flatMap((path) => [0, 1].map((): Target => ({ kind: 'mutex', path })));
    const loops = await loopTogether(targets, cycles, true, () =>
      clients.slice(0, 2).map((client, n) => holdLoop(new MultiLock(paths.map((path) => new Mutex(client, path))), `zklock-multi-${n}`, cycles, true)),
    );
    const ours = loops.ours.flat();
    for (const path of paths) {
      const onPath = loops.theirs.filter((_, i) => targets[i]!.path === path).flat();
      assert.equal(onPath.length, 2 * cycles);
      assertExclusion([...ours, ...onPath]);
      assert.ok(sideChanges([...ours, ...onPath], sideOf) >= CONTENDED_CHANGES, `the two sides contended on ${path}`);
      await fx.assertNoNodes(path);
    }
    assert.equal(ours.length, 2 * cycles);
  });
});
