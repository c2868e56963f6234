import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Perms, READ_ACL_UNSAFE, UNREADABLE_OWNER, ZooKeeperClient } from '../../src/index.js';
import { ZooKeeperServer, digestIdentity } from '../../src/testing/index.js';
import { eventually } from '../support/wait.js';
import { HOLD, LONG_HOLD_MS, endHolds, runCli, startCli, waitForEvents } from './helpers/cli.js';

const svc = digestIdentity('svc');
const ops = digestIdentity('ops');
const eve = digestIdentity('eve');
const SUPER = { user: 'super', password: 'super-password' };
const sortAcl = (acl: readonly { perms: number; id: { scheme: string; id: string } }[]): string[] => acl.map((e) => `${e.id.scheme}:${e.id.id}:${e.perms}`).sort();

describe('zklock exec --acl, and status of contenders the caller may not read (issue 29)', () => {
  let server: ZooKeeperServer;
  let observer: ZooKeeperClient;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    server = await ZooKeeperServer.start({ superDigest: SUPER });
    observer = await ZooKeeperClient.connect(server.connectString, { auth: [{ scheme: 'digest', auth: `${SUPER.user}:${SUPER.password}` }] });
    dir = mkdtempSync(join(tmpdir(), 'zklock-cli-acl-'));
    env = { ZOOKEEPER_CONNECT: server.connectString };
  });

  after(async () => {
    await observer?.close();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('--acl with a preset and a digest entry: the lock path and our node carry it, --auth\'s identity as the creator; status by another identity shows an unreadable holder', async () => {
    const log = join(dir, 'acl.jsonl');
    const acl = `creator-all,digest:${ops.id}:w`;
    const holder = startCli(['exec', '--auth', `digest:${svc.user}:${svc.password}`, '--acl', acl, '/cli-acl/lock', '--', process.execPath, HOLD, log, String(LONG_HOLD_MS)], env);
    const [start] = await waitForEvents(log, 'start');
    const expected = sortAcl([svc.acl(Perms.ALL), ops.acl(Perms.WRITE)]);
    assert.deepEqual(sortAcl((await observer.getACL(start!.node!)).acl), expected, 'our node');
    assert.deepEqual(sortAcl((await observer.getACL('/cli-acl/lock')).acl), expected, 'the lock path it created');
    assert.deepEqual(sortAcl((await observer.getACL('/cli-acl')).acl), expected, 'its missing parent');
    // Let the stranger list the lock, not read its node.
    await observer.setACL('/cli-acl/lock', [svc.acl(Perms.ALL), ...READ_ACL_UNSAFE]);

    const status = await runCli(['status', '--json', '--auth', `digest:${eve.user}:${eve.password}`, '/cli-acl/lock'], env);
    assert.equal(status.code, 0, status.stderr);
    const state = JSON.parse(status.stdout) as { holders: { node: string; owner: { id: string }; unreadable?: boolean }[] };
    assert.deepEqual(state.holders.map((h) => [h.node, h.owner.id, h.unreadable]), [[start!.node, UNREADABLE_OWNER, true]], 'held, by someone we may not read');
    const text = await runCli(['status', '/cli-acl/lock'], env);
    assert.ok(text.stdout.includes(UNREADABLE_OWNER), text.stdout);

    endHolds(log);
    assert.equal(await holder.exited(), 0, holder.stderr());
  });

  it('a creator entry without --auth, or a malformed --acl, is a usage error before anything is created', async () => {
    const noAuth = await runCli(['exec', '--acl', 'creator-all-read', '/cli-acl/no-auth', '--', process.execPath, '-e', '0'], env);
    assert.equal(noAuth.code, 2, noAuth.stderr);
    assert.match(noAuth.stderr, /--auth/);
    for (const bad of ['digest:ops', 'world:anyone:rx', 'nonsense']) {
      const run = await runCli(['exec', '--acl', bad, '/cli-acl/bad', '--', process.execPath, '-e', '0'], env);
      assert.equal(run.code, 2, `${bad}: ${run.stderr}`);
    }
    assert.equal(await observer.exists('/cli-acl/no-auth'), null);
    assert.equal(await observer.exists('/cli-acl/bad'), null);
  });

  it('on the recommended setup, another identity\'s release --force and revoke exit 77 and the holder keeps its lock; the operator\'s succeed', async () => {
    const log = join(dir, 'operator.jsonl');
    const lockPath = '/cli-acl-ops/lock';
    await observer.ensurePath(lockPath, { acl: [svc.acl(Perms.READ | Perms.WRITE | Perms.CREATE | Perms.DELETE), ops.acl(Perms.READ | Perms.DELETE), ...READ_ACL_UNSAFE] });
    const as = (who: typeof svc): string[] => ['--auth', `digest:${who.user}:${who.password}`];
    // Revocable, or revoke would not ask it at all (exit 1); with a signal the command ignores and a
    // long grace, so that the operator's request leaves it holding until the forced release.
    const holder = startCli(['exec', ...as(svc), '--acl', `creator-all-read,digest:${ops.id}:w`, '--revocable=SIGURG', '--grace', '60s', lockPath, '--', process.execPath, HOLD, log, String(LONG_HOLD_MS)], env);
    const [start] = await waitForEvents(log, 'start');
    const node = start!.node!;
    // exec marks its node held beside the command's start (a write of its own): read after that.
    await eventually(async () => ((await observer.exists(node))?.version ?? 0) > 0, undefined, 'exec marked its node held');
    const before = await observer.exists(node);

    for (const args of [['release', '--force', '--yes', node], ['revoke', lockPath]]) {
      const refused = await runCli([...args, ...as(eve)], env);
      assert.equal(refused.code, 77, `${args[0]}: ${refused.stderr}`);
    }
    const after = await observer.exists(node);
    assert.equal(after?.czxid, before?.czxid, 'the holder\'s node is still there');
    assert.equal(after?.version, before?.version, 'unwritten');

    const revoked = await runCli(['revoke', lockPath, ...as(ops)], env);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.notEqual((await observer.exists(node))?.version, before?.version, 'the operator\'s request is in the node');
    const released = await runCli(['release', '--force', '--yes', node, ...as(ops)], env);
    assert.equal(released.code, 0, released.stderr);
    assert.equal(await observer.exists(node), null);
    assert.equal(await holder.exited(), 75, 'the holder saw its lock lost');
  });
});
