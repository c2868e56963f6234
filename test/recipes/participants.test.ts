import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Lease, LockState, ZooKeeperClient } from '../../src/index.js';
import { MultiLock, Mutex, NonReentrantMutex, ReadWriteLock, Semaphore, SimpleLock, inspectLock, parseContender } from '../../src/index.js';
import { ROUND_TRIPS_MS, WAITER_TIMEOUT_MS } from '../support/bounds.js';
import { eventually } from '../support/wait.js';
import { RecipeFixture } from './fixtures.js';

describe('participants() on every lock, isAcquiredInThisProcess()', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  /** The server's queue under `parent`, read by the admin client: contender names by sequence. */
  async function serverQueue(parent: string): Promise<string[]> {
    const names = await zk.children(parent);
    return names
      .map((name) => ({ name, seq: parseContender(name)?.seq }))
      .filter((c): c is { name: string; seq: number } => c.seq !== undefined)
      .sort((a, b) => a.seq - b.seq)
      .map((c) => c.name);
  }

  const names = (state: LockState): { holders: string[]; waiters: string[] } => ({ holders: state.holders.map((c) => c.name), waiters: state.waiters.map((c) => c.name) });

  /** Starts `count` acquires of locks made by `make`, each on a client of its own, one after another in queue order. */
  async function queueUp(path: string, count: number, make: (client: ZooKeeperClient, i: number) => { acquire(o: { timeout: number }): Promise<Lease> }): Promise<Promise<Lease>[]> {
    const pending: Promise<Lease>[] = [];
    for (let i = 0; i < count; i++) {
      const lock = make(await zk.client(), i);
      const acquired = lock.acquire({ timeout: WAITER_TIMEOUT_MS });
      acquired.catch(() => undefined);
      pending.push(acquired);
      await eventually(async () => (await serverQueue(path)).length === i + 1, ROUND_TRIPS_MS, `contender ${i} queued`);
    }
    return pending;
  }

  it('Mutex: the holder and the waiters in the server\'s queue order, with owners; nobody on a path not made yet', async () => {
    const path = '/p/mutex';
    const client = await zk.client();
    const mutex = new Mutex(client, path, { ownerId: 'watcher' });
    assert.deepEqual(await mutex.participants(), { lockPath: path, kind: 'queue', holders: [], waiters: [] });
    const pending = await queueUp(path, 4, (c, i) => new Mutex(c, path, { ownerId: `owner-${i}` }));
    const queue = await serverQueue(path);
    const state = await mutex.participants();
    assert.deepEqual(names(state), { holders: queue.slice(0, 1), waiters: queue.slice(1) });
    assert.deepEqual(
      [...state.holders, ...state.waiters].map((c) => c.owner.id),
      ['owner-0', 'owner-1', 'owner-2', 'owner-3'],
    );
    for (const acquired of pending) await (await acquired).release();
    assert.deepEqual(await mutex.participants(), { lockPath: path, kind: 'queue', holders: [], waiters: [] });
  });

  it('a lock path that also holds a folder named locks: participants() reads it as the lock it is; inspectLock as told by its kind', async () => {
    const path = '/p/with-locks-folder';
    await zk.admin.ensurePath(`${path}/locks`);
    const client = await zk.client();
    const mutex = new Mutex(client, path);
    await using lease = await mutex.acquire({ timeout: ROUND_TRIPS_MS });
    const held = { holders: [lease.node.slice(path.length + 1)], waiters: [] };
    const state = await mutex.participants();
    assert.equal(state.kind, 'queue', 'a mutex knows it is no semaphore');
    assert.deepEqual(names(state), held);
    assert.deepEqual(names(await inspectLock(client, path, { kind: 'queue' })), held);
    // Without a kind, a locks child still reads as a semaphore (whose queue is empty here): the guess the kind overrides.
    assert.equal((await inspectLock(client, path)).kind, 'semaphore');
  });

  it('ReadWriteLock: readers share the hold, the writer and the reader behind it wait, in queue order', async () => {
    const path = '/p/rw';
    const kinds = ['read', 'read', 'write', 'read'] as const;
    const pending = await queueUp(path, kinds.length, (c, i) => {
      const rw = new ReadWriteLock(c, path);
      return kinds[i] === 'read' ? rw.readLock : rw.writeLock;
    });
    const queue = await serverQueue(path);
    const observer = new ReadWriteLock(await zk.client(), path);
    for (const side of [observer.readLock, observer.writeLock]) {
      assert.deepEqual(names(await side.participants()), { holders: queue.slice(0, 2), waiters: queue.slice(2) });
    }
    for (const acquired of pending) await (await acquired).release();
  });

  it('Semaphore: lease holders in order with owners, the queue for leases as waiters', async () => {
    const path = '/p/sem';
    const [a, b, c] = await Promise.all([zk.client(), zk.client(), zk.client()]);
    const observer = new Semaphore(c, path, 2);
    assert.deepEqual(await observer.leaseHolders(), []);
    assert.deepEqual(await observer.participants(), { lockPath: path, kind: 'semaphore', holders: [], waiters: [] });
    const first = await new Semaphore(a, path, 2, { ownerId: 'first' }).acquire();
    const second = await new Semaphore(b, path, 2, { ownerId: 'second' }).acquire();
    const waiting = new Semaphore(c, path, 2, { ownerId: 'third' }).acquire({ timeout: WAITER_TIMEOUT_MS });
    await eventually(async () => (await serverQueue(`${path}/locks`)).length === 1, ROUND_TRIPS_MS, 'the third queued');
    const holders = await observer.leaseHolders();
    assert.deepEqual(holders.map((h) => h.path), [first.node, second.node], 'both holders, in the order they took their leases');
    assert.deepEqual(holders.map((h) => h.owner.id), ['first', 'second']);
    assert.deepEqual(holders.map((h) => h.fencingToken), [first.fencingToken, second.fencingToken]);
    const state = await observer.participants();
    assert.deepEqual(state.holders.map((h) => h.name), holders.map((h) => h.name));
    assert.deepEqual(names(state).waiters, await serverQueue(`${path}/locks`));
    assert.deepEqual(state.waiters.map((w) => w.owner.id), ['third']);
    await first.release();
    const third = await waiting;
    assert.deepEqual((await observer.leaseHolders()).map((h) => h.owner.id), ['second', 'third']);
    await second.release();
    await third.release();
  });

  it('SimpleLock: its holder (its waiters leave no node); MultiLock: each lock\'s state, in sorted path order', async () => {
    const [a, b] = await Promise.all([zk.client(), zk.client()]);
    const simple = new SimpleLock(b, '/p/simple/node');
    assert.deepEqual(await simple.participants(), { lockPath: '/p/simple/node', kind: 'queue', holders: [], waiters: [] });
    const held = await new SimpleLock(a, '/p/simple/node', { ownerId: 'single' }).acquire();
    const state = await simple.participants();
    assert.deepEqual(state.holders.map((h) => [h.path, h.owner.id, h.sessionId, h.fencingToken]), [['/p/simple/node', 'single', a.sessionId, held.fencingToken]]);
    assert.deepEqual(state.waiters, []);
    await held.release();

    const multi = new MultiLock([new Mutex(b, '/p/multi/z'), new Mutex(b, '/p/multi/a')]);
    const zLease = await new Mutex(a, '/p/multi/z').acquire();
    const states = await multi.participants();
    assert.deepEqual(states.map((s) => s.lockPath), ['/p/multi/a', '/p/multi/z']);
    assert.deepEqual(states.map((s) => s.holders.map((h) => h.path)), [[], [zLease.node]]);
    await zLease.release();
  });

  it('isAcquiredInThisProcess: true while any caller holds through this lock object, false once all released or lost', async () => {
    const client = await zk.client();
    for (const Kind of [Mutex, NonReentrantMutex]) {
      const path = `/p/held/${Kind.name}`;
      const mutex = new Kind(client, path);
      const other = new Kind(client, path);
      assert.equal(mutex.isAcquiredInThisProcess(), false);
      const first = await mutex.acquire();
      assert.equal(mutex.isAcquiredInThisProcess(), true);
      assert.equal(other.isAcquiredInThisProcess(), false, 'another lock object on the same path holds nothing');
      const second = mutex.acquire({ timeout: WAITER_TIMEOUT_MS });
      await first.release();
      const next = await second;
      assert.equal(mutex.isAcquiredInThisProcess(), true, 'the second caller holds it now');
      await next.release();
      assert.equal(mutex.isAcquiredInThisProcess(), false);
      await mutex.runExclusive(() => assert.equal(mutex.isAcquiredInThisProcess(), true));
      assert.equal(mutex.isAcquiredInThisProcess(), false);

      // Lost: an operator deletes the node; the lease learns of it (its holder looks at its signal, which sets its watch), and so does the lock.
      const lost = await mutex.acquire();
      assert.equal(lost.signal.aborted, false);
      await zk.admin.delete(lost.node);
      await eventually(() => !mutex.isAcquiredInThisProcess(), ROUND_TRIPS_MS, 'a lost lease no longer counts');
      await lost.release();
    }

    const rw = new ReadWriteLock(client, '/p/held/rw');
    const writing = await rw.writeLock.acquire();
    assert.deepEqual([rw.writeLock.isAcquiredInThisProcess(), rw.readLock.isAcquiredInThisProcess()], [true, false]);
    const reading = await rw.downgrade(writing);
    assert.deepEqual([rw.writeLock.isAcquiredInThisProcess(), rw.readLock.isAcquiredInThisProcess()], [false, true], 'a downgrade moves the hold to the read side');
    await reading.release();
    assert.deepEqual([rw.writeLock.isAcquiredInThisProcess(), rw.readLock.isAcquiredInThisProcess()], [false, false]);
  });
});
