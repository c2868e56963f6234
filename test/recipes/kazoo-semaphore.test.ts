import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Lease } from '../../src/index.js';
import { Semaphore, ZooKeeperClient, ZooKeeperError } from '../../src/index.js';
import { ZooKeeperServer } from '../../src/testing/index.js';
import { ROUND_TRIPS_MS } from '../support/bounds.js';
import { mostAtOnce } from '../support/intervals.js';
import { JsonLineProcess } from '../support/json-line-process.js';
import { holdLoop, isLockError } from './fixtures.js';

/** Debian's python3-kazoo lives in the system interpreter, not in a pyenv one that may come first on PATH. */
const PYTHON = '/usr/bin/python3';
const WORKER = fileURLToPath(new URL('./fixtures/kazoo_worker.py', import.meta.url));

/*
 * Issue 25, item 13: kazoo's Semaphore keeps its leases as the path's own children and counts
 * every child as a lease; zklock's (Curator's layout) keeps them under `leases/`. On one path each
 * counted only its own holders, and both record the same limit text: N = 3 let four hold at once,
 * with no error on either side. A zklock semaphore now refuses a path with a kazoo lease on it.
 */
describe("a zklock semaphore on kazoo's Semaphore path", { timeout: 120_000 }, () => {
  let server: ZooKeeperServer;
  let client: ZooKeeperClient;
  let admin: ZooKeeperClient;
  /** Every kazoo peer started: a failed test must not leave one holding (and the file running). */
  const peers: JsonLineProcess[] = [];

  before(async () => {
    server = await ZooKeeperServer.start();
    [client, admin] = await Promise.all([ZooKeeperClient.connect(server.connectString), ZooKeeperClient.connect(server.connectString)]);
  });
  after(async () => {
    for (const peer of peers) peer.end();
    await Promise.all(peers.map((peer) => peer.exited));
    await client?.close();
    await admin?.close();
    await server?.close();
  });

  function kazooSemaphore(path: string, maxLeases: number, mode: 'hold' | 'try' | 'loop' = 'hold', ...args: string[]): JsonLineProcess {
    const peer = new JsonLineProcess('kazoo semaphore', PYTHON, [WORKER, '--hosts', server.connectString, '--path', path, '--kind', 'semaphore', '--max-leases', String(maxLeases), '--mode', mode, ...args]);
    peers.push(peer);
    return peer;
  }

  async function children(path: string): Promise<string[]> {
    try {
      return (await admin.getChildren(path)).children.sort();
    } catch (error) {
      if (error instanceof ZooKeeperError && error.code === 'NONODE') return [];
      throw error;
    }
  }

  it('a kazoo lease on the path: acquire and tryAcquire fail with FOREIGN_SEMAPHORE, naming the path, and take no lease; once it is gone the path works', async () => {
    const path = '/kz-sem/held';
    const kazoo = kazooSemaphore(path, 3);
    const { node } = await kazoo.line('held');
    const semaphore = new Semaphore(client, path, 3);
    const foreign = (error: unknown): boolean => isLockError('FOREIGN_SEMAPHORE')(error) && (error as ZooKeeperError).path === path;
    await assert.rejects(semaphore.acquire({ timeout: ROUND_TRIPS_MS }), foreign);
    await assert.rejects(semaphore.tryAcquire(), foreign);
    await assert.rejects(semaphore.acquire({ leases: 2, timeout: ROUND_TRIPS_MS }), foreign);
    assert.deepEqual(await children(`${path}/leases`), [], 'no zklock lease was taken');
    assert.deepEqual(await children(`${path}/locks`), [], 'no queue place is left');
    assert.deepEqual(
      (await children(path)).filter((c) => c !== 'locks' && c !== 'leases'),
      [String(node).slice(path.length + 1)],
      "kazoo's lease alone",
    );

    kazoo.send('');
    assert.equal(await kazoo.exited, 0);
    const lease: Lease = await semaphore.acquire({ timeout: ROUND_TRIPS_MS });
    await lease.release();
  });

  it('kazoo is not refused by a zklock semaphore: it counts our locks/ and leases/ as two leases and takes one beside our N; the next zklock acquire then fails loudly', async () => {
    const path = '/kz-sem/after';
    const semaphore = new Semaphore(client, path, 3);
    const ours = await semaphore.acquire({ leases: 3, timeout: ROUND_TRIPS_MS });
    // What kazoo 2.8 does, documented in the README: children [locks, leases] are 2 < 3, so it takes a lease.
    const kazoo = kazooSemaphore(path, 3);
    await kazoo.line('held');
    await ours.leases[0]!.release();
    await assert.rejects(semaphore.acquire({ timeout: ROUND_TRIPS_MS }), isLockError('FOREIGN_SEMAPHORE'));
    assert.equal((await children(`${path}/leases`)).length, 2, 'no lease taken beside kazoo\'s');
    kazoo.send('');
    assert.equal(await kazoo.exited, 0);
    await ours.release().catch(() => undefined);
  });

  it("layout: 'kazoo' shares kazoo's Semaphore: each side counts the other's holders, both ways", async () => {
    const path = '/kz-sem/shared';
    const semaphore = new Semaphore(client, path, 2, { layout: 'kazoo', ownerId: 'zklock' });
    const kazoo = kazooSemaphore(path, 2);
    const { node } = await kazoo.line('held');
    assert.equal(await semaphore.tryAcquire({ leases: 2 }), null, "one of two slots is kazoo's");
    const ours = await semaphore.tryAcquire();
    assert.ok(ours, 'the other slot is free');
    assert.equal(ours.node.startsWith(`${path}/`), true, "our lease is the path's own child, as kazoo's are");
    assert.deepEqual((await semaphore.leaseHolders()).map((h) => h.path), [String(node), ours.node], 'both holders, in the order they came');
    const trier = kazooSemaphore(path, 2, 'try');
    assert.deepEqual(await trier.line('acquired'), { acquired: false }, 'kazoo counts our lease');
    assert.equal(await trier.exited, 0);
    kazoo.send('');
    assert.equal(await kazoo.exited, 0);
    await ours.release();
    assert.deepEqual(await children(path), [], 'no node left');
  });

  it("layout: 'kazoo' beside kazoo's Semaphore in loops, N = 2: never more than two holders, and both sides hold", async () => {
    const path = '/kz-sem/loops';
    const cycles = 20;
    const loopers = [kazooSemaphore(path, 2, 'loop', '--cycles', String(cycles), '--hold-ms', '10'), kazooSemaphore(path, 2, 'loop', '--cycles', String(cycles), '--hold-ms', '10')];
    const [c1, c2] = await Promise.all([ZooKeeperClient.connect(server.connectString), ZooKeeperClient.connect(server.connectString)]);
    try {
      const ours = await Promise.all([c1, c2].map((c, i) => holdLoop(new Semaphore(c, path, 2, { layout: 'kazoo' }), `zklock${i}`, cycles, false, 10)));
      for (const looper of loopers) assert.equal(await looper.exited, 0);
      const theirs = loopers.flatMap((looper, i) => looper.lines.filter((l) => 'start' in l).map((l) => ({ who: `kazoo${i}`, start: l.start as number, end: l.end as number, exclusive: false })));
      assert.equal(theirs.length, 2 * cycles);
      const all = [...ours.flat(), ...theirs];
      assert.ok(mostAtOnce(all) <= 2, `${mostAtOnce(all)} holders at once`);
    } finally {
      await Promise.all([c1.close(), c2.close()]);
    }
    assert.deepEqual(await children(path), [], 'no lease left');
  });

  it('each layout refuses a path the other uses, before taking a lease', async () => {
    const curator = new Semaphore(client, '/kz-sem/mixed', 3);
    const kazooLayout = new Semaphore(client, '/kz-sem/mixed', 3, { layout: 'kazoo' });
    const held = await curator.acquire({ timeout: ROUND_TRIPS_MS });
    await assert.rejects(kazooLayout.acquire({ timeout: ROUND_TRIPS_MS }), isLockError('FOREIGN_SEMAPHORE'));
    await held.release();
    // The curator layout's folders stay (containers, reaped later): a kazoo-layout semaphore still refuses the path.
    await assert.rejects(kazooLayout.tryAcquire(), isLockError('FOREIGN_SEMAPHORE'));
    const other = new Semaphore(client, '/kz-sem/mixed-2', 3, { layout: 'kazoo' });
    const theirs = await other.acquire({ timeout: ROUND_TRIPS_MS });
    await assert.rejects(new Semaphore(client, '/kz-sem/mixed-2', 3).acquire({ timeout: ROUND_TRIPS_MS }), isLockError('FOREIGN_SEMAPHORE'));
    assert.deepEqual(await children('/kz-sem/mixed-2/leases'), [], 'no lease taken');
    await theirs.release();
  });

  it("layout: 'kazoo' keeps the limit where kazoo does: a fresh path is made persistent with it, kazoo with another limit fails, and so does zklock on kazoo's", async () => {
    const path = '/kz-sem/limit';
    const lease = await new Semaphore(client, path, 2, { layout: 'kazoo' }).acquire({ timeout: ROUND_TRIPS_MS });
    const { data, stat } = await admin.getData(path);
    assert.equal(data.toString(), '2', 'our limit, recorded as kazoo records its own');
    assert.equal(stat.ephemeralOwner, 0n, 'persistent, not a container the server would reap under a running kazoo');
    await lease.release();
    const kazoo = kazooSemaphore(path, 3, 'try');
    assert.notEqual(await kazoo.exited, 0, "kazoo's ValueError: inconsistent max leases");
    assert.equal(kazoo.lines.some((l) => 'acquired' in l), false);

    const theirs = kazooSemaphore('/kz-sem/limit-kazoo', 2);
    await theirs.line('held');
    await assert.rejects(new Semaphore(client, '/kz-sem/limit-kazoo', 3, { layout: 'kazoo' }).acquire({ timeout: ROUND_TRIPS_MS }), isLockError('LEASE_LIMIT_MISMATCH'));
    theirs.send('');
    assert.equal(await theirs.exited, 0);
  });
});
