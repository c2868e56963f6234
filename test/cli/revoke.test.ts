import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Lease } from '../../src/index.js';
import { Mutex, ReadWriteLock, Semaphore, ZooKeeperClient } from '../../src/index.js';
import { ZooKeeperServer } from '../../src/testing/index.js';
import { ROUND_TRIPS_MS, WAITER_TIMEOUT_MS } from '../support/bounds.js';
import { eventually } from '../support/wait.js';
import { runCli } from './helpers/cli.js';

describe('zklock revoke', () => {
  let server: ZooKeeperServer;
  let holderClient: ZooKeeperClient;
  let waiterClient: ZooKeeperClient;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    server = await ZooKeeperServer.start();
    [holderClient, waiterClient] = await Promise.all([ZooKeeperClient.connect(server.connectString), ZooKeeperClient.connect(server.connectString)]);
    env = { ZOOKEEPER_CONNECT: server.connectString };
  });

  after(async () => {
    await Promise.all([holderClient?.close(), waiterClient?.close()]);
    await server?.stop();
  });

  it('asks the holder by default, or the named contender; status then says so; the lock stays held', async () => {
    const holder = await new Mutex(holderClient, '/cli/revoke', { revocable: true, ownerId: 'first' }).acquire({ timeout: ROUND_TRIPS_MS });
    let waiterLease: Lease | undefined;
    const waiting = new Mutex(waiterClient, '/cli/revoke', { revocable: true, ownerId: 'second' }).acquire({ timeout: WAITER_TIMEOUT_MS }).then((l) => (waiterLease = l));
    await eventually(async () => (await holderClient.getChildren('/cli/revoke')).children.length === 2, ROUND_TRIPS_MS, 'the waiter queued');

    const revoked = await runCli(['revoke', '/cli/revoke'], env);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal(revoked.stdout, `revocation requested of holder ${holder.node} (first): it listens (revocable)\n`);
    await eventually(() => holder.revocationRequested.aborted, ROUND_TRIPS_MS, 'the holder heard');
    assert.equal(holder.held, true, 'a request, not a release');

    const status = await runCli(['status', '/cli/revoke'], env);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /holder\s+first \(revocation requested\)/, 'still named');
    const json = JSON.parse((await runCli(['status', '--json', '/cli/revoke'], env)).stdout) as { holders: { revocationRequested?: boolean }[]; waiters: { node: string; revocationRequested?: boolean }[] };
    assert.equal(json.holders[0]!.revocationRequested, true);
    assert.equal(json.waiters[0]!.revocationRequested, undefined);

    const waiterName = json.waiters[0]!.node.slice('/cli/revoke/'.length);
    const named = await runCli(['revoke', '/cli/revoke', '--node', waiterName], env);
    assert.equal(named.code, 0, named.stderr);
    assert.equal(named.stdout, `revocation requested of contender ${json.waiters[0]!.node} (second): it listens (revocable)\n`);
    await holder.release();
    await waiting;
    assert.equal(waiterLease?.revocationRequested.aborted, true, 'the waiter holds, asked already');
    await waiterLease?.release();
  });

  it('fails with 1 on a free or missing lock or a gone node, 2 on a name that is not a contender', async () => {
    await holderClient.ensurePath('/cli/revoke-free');
    const free = await runCli(['revoke', '/cli/revoke-free'], env);
    assert.equal(free.code, 1);
    assert.match(free.stderr, /is free: nobody to ask/);
    const missing = await runCli(['revoke', '/cli/no-such-lock'], env);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no lock at \/cli\/no-such-lock/);
    const gone = await runCli(['revoke', '/cli/revoke-free', '--node', '_c_00000000-0000-4000-8000-000000000000-lock-0000000003'], env);
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /does not exist \(already released\?\); nothing asked/);
    const bogus = await runCli(['revoke', '/cli/revoke-free', '--node', 'config'], env);
    assert.equal(bogus.code, 2);
    assert.match(bogus.stderr, /not a lock contender node/);
    const path = await runCli(['revoke', '/cli/revoke-free', '--node', '/cli/x/lock-0000000001'], env);
    assert.equal(path.code, 2);
    assert.deepEqual((await holderClient.getChildren('/cli/revoke-free')).children, [], 'nothing created');
  });

  it('refuses a semaphore with 2 whether or not anyone holds it; asks each of several readers', async () => {
    const lease = await new Semaphore(holderClient, '/cli/revoke-sem', 2).acquire({ timeout: ROUND_TRIPS_MS });
    const held = await runCli(['revoke', '/cli/revoke-sem'], env);
    assert.equal(held.code, 2);
    assert.match(held.stderr, /is a semaphore/);
    await lease.release();
    const free = await runCli(['revoke', '/cli/revoke-sem'], env);
    assert.equal(free.code, 2, 'a free semaphore is still a semaphore');
    assert.match(free.stderr, /is a semaphore/);

    const readers = await Promise.all([holderClient, waiterClient].map((c) => new ReadWriteLock(c, '/cli/revoke-readers', { revocable: true, ownerId: 'reader' }).readLock.acquire({ timeout: ROUND_TRIPS_MS })));
    const both = await runCli(['revoke', '/cli/revoke-readers'], env);
    assert.equal(both.code, 0, both.stderr);
    assert.deepEqual(both.stdout.split('\n').filter(Boolean).sort(), readers.map((r) => `revocation requested of holder ${r.node} (reader): it listens (revocable)`).sort());
    await Promise.all(readers.map((r) => r.release()));
  });

  it('asks the holder of a mutex whose path also holds a folder named locks (no semaphore: as status and ls read it)', async () => {
    await holderClient.ensurePath('/cli/revoke-beside/locks');
    const holder = await new Mutex(holderClient, '/cli/revoke-beside', { revocable: true, ownerId: 'beside' }).acquire({ timeout: ROUND_TRIPS_MS });
    const revoked = await runCli(['revoke', '/cli/revoke-beside'], env);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal(revoked.stdout, `revocation requested of holder ${holder.node} (beside): it listens (revocable)\n`);
    await eventually(() => holder.revocationRequested.aborted, ROUND_TRIPS_MS, 'the holder heard');
    await holder.release();
  });
});
