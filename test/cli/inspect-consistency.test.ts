import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { inspectLock } from '../../src/index.js';
import { ROUND_TRIPS_MS } from '../support/bounds.js';
import { JsonLineProcess } from '../support/json-line-process.js';
import { eventually } from '../support/wait.js';
import { runCli } from './helpers/cli.js';
import { execFixture } from './helpers/exec-fixture.js';

/** Debian's python3-kazoo lives in the system interpreter, not in a pyenv one that may come first on PATH. */
const PYTHON = '/usr/bin/python3';
const KAZOO_SEMAPHORE = fileURLToPath(new URL('./fixtures/kazoo_semaphore.py', import.meta.url));

describe('zklock inspection agrees with what is there', () => {
  const fx = execFixture('inspect');

  it('a kazoo semaphore with 2 holders and 1 waiter: inspectLock, status and ls show them, the waiters\' kazoo lock is no lock of its own', async () => {
    const peer = new JsonLineProcess('kazoo semaphore', PYTHON, [KAZOO_SEMAPHORE, fx.server.connectString, '/cli/kz/encoders']);
    try {
      await peer.line((l) => l.held === 2);
      // The server's word that the third one queued: its node in kazoo's lock beside the semaphore.
      await eventually(async () => (await fx.contenders('/cli/kz/encoders-__lock__')).length === 1, ROUND_TRIPS_MS, 'the waiter queued');

      const state = await inspectLock(fx.client, '/cli/kz/encoders');
      assert.equal(state.kind, 'semaphore');
      assert.deepEqual(state.holders.map((h) => h.owner.id).sort(), ['kazoo-0', 'kazoo-1']);
      // kazoo's Semaphore hands its identifier's bytes to its Lock, which writes their repr: b'kazoo-2'.
      assert.deepEqual(state.waiters.map((w) => w.owner.id.includes('kazoo-2')), [true]);

      const status = await runCli(['status', '/cli/kz/encoders'], fx.env);
      assert.equal(status.code, 0, status.stderr);
      assert.match(status.stdout, /^holder\s+kazoo-[01]\s[\s\S]*^holder\s+kazoo-[01]\s[\s\S]*^waiter 1\s+\S*kazoo-2\S*\s/m);
      const ls = await runCli(['ls', '/cli/kz'], fx.env);
      assert.equal(ls.code, 0, ls.stderr);
      const rows = ls.stdout.trim().split('\n').slice(1);
      assert.equal(rows.length, 1, ls.stdout);
      assert.match(rows[0]!, /^\/cli\/kz\/encoders\s+2\s+1\s+kazoo-[01]/);
    } finally {
      peer.send('stop');
      await peer.exited;
    }
    // Free now (the sessions went): still a semaphore, with nobody.
    const free = await runCli(['status', '/cli/kz/encoders'], fx.env);
    assert.equal(free.stdout, '/cli/kz/encoders: free (no holders, no waiters)\n');
  });

  it('a missing chroot is CHROOT_MISSING (exit 1) in status and ls, as in exec, not "no lock"', async () => {
    const env = { ZOOKEEPER_CONNECT: `${fx.server.connectString}/no-such-chroot` };
    for (const args of [['status', '/x'], ['ls'], ['exec', '/x', '--', 'true']]) {
      const result = await runCli(args, env);
      assert.equal(result.code, 1, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, /CHROOT_MISSING: the chroot \/no-such-chroot/, args.join(' '));
    }
  });

  it('ls and ui share their defaults: root / and --max-nodes 100000', async () => {
    for (const [command, root] of [['ls', /^\s+root\s+where to start \(default: "\/"\)/m], ['ui', /--root <path>\s+where the locks are\s+\(default:\s+"\/"\)/]] as const) {
      const help = await runCli([command, '--help']);
      assert.match(help.stdout, root, help.stdout);
      assert.match(help.stdout, /--max-nodes <n>[\s\S]*?\(default:\s+100000\)/, `${command}: ${help.stdout}`);
    }
  });
});
