import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { ACL, LockAcl, ZooKeeperClient } from '../../src/index.js';
import { CREATOR_ALL_ACL, Mutex, Perms, READ_ACL_UNSAFE } from '../../src/index.js';
import { digestIdentity } from '../../src/testing/index.js';
import { ROUND_TRIPS_MS } from '../support/bounds.js';
import { JsonLineProcess } from '../support/json-line-process.js';
import { eventually } from '../support/wait.js';
import { CuratorPeer } from './fixtures/curator-peer.js';
import { RecipeFixture } from './fixtures.js';

/** Debian's python3-kazoo lives in the system interpreter (see interop.test.ts). */
const PYTHON = '/usr/bin/python3';
const WORKER = fileURLToPath(new URL('./fixtures/kazoo_worker.py', import.meta.url));
const svc = digestIdentity('svc');
const SUPER = { user: 'super', password: 'super-password' };
/** What Curator's and kazoo's side create with (their ACLProvider, default_acl), and ours. */
const CREATOR_ALL_READ = [...CREATOR_ALL_ACL, ...READ_ACL_UNSAFE] satisfies LockAcl;
const AS_STORED = [svc.acl(Perms.ALL), ...READ_ACL_UNSAFE];
const sortAcl = (acl: readonly ACL[]): string[] => acl.map((e) => `${e.id.scheme}:${e.id.id}:${e.perms}`).sort();

/**
 * Curator and kazoo contenders on a protected lock path (issue 29): given the same credentials
 * as zklock's, every side sees the others' holders, and Curator's revocation reaches a zklock holder.
 */
describe('interop with Curator and kazoo on a lock path protected by ACLs', { timeout: 180_000 }, () => {
  let fx: RecipeFixture;
  let curator: CuratorPeer;
  let observer: ZooKeeperClient;
  let client: ZooKeeperClient;

  before(async () => {
    fx = await RecipeFixture.start({ superDigest: SUPER });
    observer = await fx.client({ auth: [{ scheme: 'digest', auth: `${SUPER.user}:${SUPER.password}` }] });
    client = await fx.client({ auth: svc.auth });
    curator = await CuratorPeer.start(fx.server.connectString, `${svc.user}:${svc.password}`);
  });
  after(async () => {
    await curator?.close();
    await fx?.close();
  });

  async function assertStored(path: string): Promise<void> {
    assert.deepEqual(sortAcl((await observer.getACL(path)).acl), sortAcl(AS_STORED), path);
  }

  it('Curator (same identity): exclusion both ways, its nodes carry its ACLProvider\'s ACL, and its Revoker reaches a revocable zklock holder', async () => {
    const path = '/acl-interop/curator';
    const mutex = new Mutex(client, path, { acl: CREATOR_ALL_READ, revocable: true });
    const lease = await mutex.acquire({ timeout: ROUND_TRIPS_MS });
    await assertStored(path);
    await assertStored(lease.node);
    assert.equal(await curator.tryAcquire({ kind: 'mutex', path }), false, 'Curator sees the zklock holder');
    await curator.revoke(lease.node);
    await eventually(() => lease.revocationRequested.aborted, ROUND_TRIPS_MS, 'Curator\'s request reached the holder');
    await lease.release();

    const hold = curator.hold({ kind: 'mutex', path });
    const { node } = await curator.event(hold, 'acquired');
    await assertStored(String(node));
    assert.equal(await mutex.tryAcquire(), null, 'zklock sees the Curator holder');
    curator.release(hold);
    await curator.event(hold, 'released');
    const after = await mutex.acquire({ timeout: ROUND_TRIPS_MS });
    await after.release();
  });

  it('kazoo (same identity): exclusion both ways, its nodes carry its default_acl', async () => {
    const path = '/acl-interop/kazoo';
    const kazoo = (...args: string[]): JsonLineProcess =>
      new JsonLineProcess('kazoo worker', PYTHON, [WORKER, '--hosts', fx.server.connectString, '--path', path, '--digest', `${svc.user}:${svc.password}`, '--extra=-lock-', ...args]);
    const mutex = new Mutex(client, path, { acl: CREATOR_ALL_READ });

    const holder = kazoo('--mode', 'hold');
    const held = await holder.line('held');
    await assertStored(path);
    await assertStored(`${path}/${String(held.node)}`);
    assert.equal(await mutex.tryAcquire(), null, 'zklock sees the kazoo holder');
    holder.send('');
    assert.equal(await holder.exited, 0);

    const lease = await mutex.acquire({ timeout: ROUND_TRIPS_MS });
    const trier = kazoo('--mode', 'try');
    assert.deepEqual(await trier.line('acquired'), { acquired: false }, 'kazoo sees the zklock holder');
    assert.equal(await trier.exited, 0);
    await lease.release();
  });
});
