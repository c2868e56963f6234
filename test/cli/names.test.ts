import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Mutex, Semaphore } from '../../src/index.js';
import { parseOwner } from '../../src/recipes/support/owner-data.js';
import { ROUND_TRIPS_MS } from '../support/bounds.js';
import { eventually } from '../support/wait.js';
import { HOLD, LONG_HOLD_MS, endHolds, runCli, startCli, waitForEvents } from './helpers/cli.js';
import { execFixture } from './helpers/exec-fixture.js';

/** The NODE column of `status`'s row for `role`: the name an operator copies from it. */
async function statusNode(lockPath: string, role: string, env: NodeJS.ProcessEnv): Promise<string> {
  const status = await runCli(['status', lockPath], env);
  assert.equal(status.code, 0, status.stderr);
  const row = status.stdout.split('\n').find((line) => line.startsWith(role));
  assert.ok(row, status.stdout);
  return row.trim().split(/\s+/).at(-1)!;
}

describe('zklock names: exec --owner, contenders by name or path', () => {
  const fx = execFixture('names');

  it('exec --owner NAME is the owner in its node, as status and ls show it', async () => {
    const log = join(fx.dir, 'owner.jsonl');
    const run = startCli(['exec', '--owner', 'nightly-etl', '/cli/names/owned', '--', process.execPath, HOLD, log, String(LONG_HOLD_MS)], fx.env);
    await waitForEvents(log, 'start');
    const [node] = await fx.contenders('/cli/names/owned');
    assert.ok(node);
    // The server's copy of the node, not the CLI's word.
    assert.equal(parseOwner((await fx.client.getData(`/cli/names/owned/${node}`)).data).id, 'nightly-etl');
    const status = await runCli(['status', '/cli/names/owned'], fx.env);
    assert.match(status.stdout, /^holder\s+nightly-etl\s/m, status.stdout);
    const ls = await runCli(['ls', '/cli/names'], fx.env);
    assert.match(ls.stdout, /\/cli\/names\/owned\s+1\s+0\s+nightly-etl/, ls.stdout);
    endHolds(log);
    assert.equal(await run.exited(), 0, run.stderr());
    const empty = await runCli(['exec', '--owner', '', '/cli/names/owned', '--', 'true'], fx.env);
    assert.equal(empty.code, 2, empty.stderr);
  });

  it('revoke --node and release --force take the node name status prints, or the full path', async () => {
    const holder = await new Mutex(fx.client, '/cli/names/lock', { revocable: true }).acquire({ timeout: ROUND_TRIPS_MS });
    const name = await statusNode('/cli/names/lock', 'holder', fx.env);
    assert.equal(`/cli/names/lock/${name}`, holder.node);

    const byPath = await runCli(['revoke', '/cli/names/lock', '--node', holder.node], fx.env);
    assert.equal(byPath.code, 0, byPath.stderr);
    assert.match(byPath.stdout, /^revocation requested of contender \S+ \(.+\): it listens \(revocable\)\n$/);
    assert.ok(byPath.stdout.includes(holder.node));
    await eventually(() => holder.revocationRequested.aborted, ROUND_TRIPS_MS, 'the holder heard');
    const elsewhere = await runCli(['revoke', '/cli/names/lock', '--node', `/cli/names/other/${name}`], fx.env);
    assert.equal(elsewhere.code, 2, 'a path outside the lock is refused');
    assert.match(elsewhere.stderr, /is not a contender of the lock \/cli\/names\/lock/);

    const released = await runCli(['release', '--force', '--yes', '/cli/names/lock', name], fx.env);
    assert.equal(released.code, 0, released.stderr);
    assert.equal(released.stdout, `deleted ${holder.node}\n`);
    assert.deepEqual(await fx.contenders('/cli/names/lock'), [], 'the server has no contender left');
    await eventually(() => holder.signal.aborted, ROUND_TRIPS_MS, 'the holder lost its lock');

    // A semaphore's lease lies one level down: the name status prints finds it there.
    const lease = await new Semaphore(fx.client, '/cli/names/sem', 2).acquire({ timeout: ROUND_TRIPS_MS });
    const leaseName = await statusNode('/cli/names/sem', 'holder', fx.env);
    const freed = await runCli(['release', '--force', '--yes', '/cli/names/sem', leaseName], fx.env);
    assert.equal(freed.code, 0, freed.stderr);
    assert.equal(freed.stdout, `deleted ${lease.node}\n`);
    assert.deepEqual(await fx.contenders('/cli/names/sem/leases'), []);
  });
});
