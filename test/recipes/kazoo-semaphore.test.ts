import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Lease } from '../../src/index.js';
import { Semaphore, ZooKeeperClient, ZooKeeperError } from '../../src/index.js';
import { ZooKeeperServer } from '../../src/testing/index.js';
import { ROUND_TRIPS_MS } from '../support/bounds.js';
import { JsonLineProcess } from '../support/json-line-process.js';
import { isLockError } from './fixtures.js';

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

  function kazooSemaphore(path: string, maxLeases: number): JsonLineProcess {
    const peer = new JsonLineProcess('kazoo semaphore', PYTHON, [WORKER, '--hosts', server.connectString, '--path', path, '--kind', 'semaphore', '--max-leases', String(maxLeases), '--mode', 'hold']);
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
});
