import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isRevocationRequest } from '../../src/index.js';
import { parseOwner } from '../../src/recipes/support/owner-data.js';
import { HOLD, LONG_HOLD_MS, endHolds, runCli, startCli, waitForEvents } from './helpers/cli.js';
import { execFixture } from './helpers/exec-fixture.js';

describe('zklock revoke of an exec holder', () => {
  const fx = execFixture('revoke-exec');

  /** The data of the one contender under `lockPath`, as the server has it. */
  async function holderData(lockPath: string): Promise<Buffer> {
    const [node] = await fx.contenders(lockPath);
    assert.ok(node, `a contender under ${lockPath}`);
    return (await fx.client.getData(`${lockPath}/${node}`)).data;
  }

  it('a holder that does not listen is not asked: exit 1, and its node still names it', async () => {
    const log = join(fx.dir, 'plain.jsonl');
    const run = startCli(['exec', '--owner', 'etl', '/cli/rx/plain', '--', process.execPath, HOLD, log, String(LONG_HOLD_MS)], fx.env);
    await waitForEvents(log, 'start');
    const revoked = await runCli(['revoke', '/cli/rx/plain'], fx.env);
    assert.equal(revoked.code, 1, revoked.stdout);
    assert.match(revoked.stderr, /\(etl\) does not listen for revocation requests \(its lock is not revocable\): nothing asked/);
    const data = await holderData('/cli/rx/plain');
    assert.equal(isRevocationRequest(data), false, 'nothing written');
    assert.equal(parseOwner(data).id, 'etl');
    assert.match((await runCli(['status', '/cli/rx/plain'], fx.env)).stdout, /^holder\s+etl\s/m);
    endHolds(log);
    assert.equal(await run.exited(), 0, run.stderr());
  });

  it('exec --revocable: revoke says it listens, the command gets SIGTERM, and status, ls and the node still name the holder', async () => {
    const log = join(fx.dir, 'revocable.jsonl');
    // The command ignores SIGTERM: it stays in its grace while we look.
    const run = startCli(['exec', '--owner', 'etl2', '--revocable', '--grace', '10m', '/cli/rx/rev', '--', process.execPath, HOLD, log, String(LONG_HOLD_MS), '--ignore-term'], fx.env);
    await waitForEvents(log, 'start');
    const revoked = await runCli(['revoke', '/cli/rx/rev'], fx.env);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.match(revoked.stdout, /^revocation requested of holder \/cli\/rx\/rev\/\S+ \(etl2\): it listens \(revocable\)\n$/);
    const [signal] = await waitForEvents(log, 'signal');
    assert.equal(signal?.signal, 'SIGTERM');
    assert.match(run.stderr(), /zklock: revocation of \/cli\/rx\/rev requested; asking the command to let go \(SIGTERM, SIGKILL after 600000 ms\)/);

    const data = await holderData('/cli/rx/rev');
    assert.equal(isRevocationRequest(data), true);
    assert.equal(parseOwner(data).id, 'etl2', 'the request kept the owner');
    assert.match((await runCli(['status', '/cli/rx/rev'], fx.env)).stdout, /^holder\s+etl2 \(revocation requested\)\s/m);
    const json = JSON.parse((await runCli(['status', '--json', '/cli/rx/rev'], fx.env)).stdout) as { holders: { owner: { id: string }; revocationRequested?: boolean }[] };
    assert.equal(json.holders[0]?.owner.id, 'etl2');
    assert.equal(json.holders[0]?.revocationRequested, true);
    assert.match((await runCli(['ls', '/cli/rx'], fx.env)).stdout, /\/cli\/rx\/rev\s+1\s+0\s+etl2/);
    // Asked again: still a request, still named.
    assert.equal((await runCli(['revoke', '/cli/rx/rev'], fx.env)).code, 0);
    assert.equal(parseOwner(await holderData('/cli/rx/rev')).id, 'etl2');

    endHolds(log);
    assert.equal(await run.exited(), 0, run.stderr());
    assert.deepEqual(await fx.contenders('/cli/rx/rev'), [], 'released');
  });

  it('exec --revocable=HUP sends that signal; the command\'s own exit code is exec\'s; bad uses are refused', async () => {
    const log = join(fx.dir, 'hup.jsonl');
    const run = startCli(['exec', '--revocable=HUP', '/cli/rx/hup', '--', process.execPath, HOLD, log, String(LONG_HOLD_MS)], fx.env);
    await waitForEvents(log, 'start');
    assert.equal((await runCli(['revoke', '/cli/rx/hup'], fx.env)).code, 0);
    const [signal] = await waitForEvents(log, 'signal');
    assert.equal(signal?.signal, 'SIGHUP');
    assert.equal(await run.exited(), 42, run.stderr());
    assert.deepEqual(await fx.contenders('/cli/rx/hup'), []);

    for (const args of [['--revocable=NOPE'], ['--revocable', '--limit', '2']]) {
      const refused = await runCli(['exec', ...args, '/cli/rx/bad', '--', 'true'], fx.env);
      assert.equal(refused.code, 2, `${args.join(' ')}: ${refused.stderr}`);
    }
  });
});
