import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Mutex, Semaphore, ZooKeeperClient } from '../../src/index.js';
import { ZooKeeperServer } from '../../src/testing/index.js';
import { eventually } from '../support/wait.js';
import type { CliRun } from './helpers/cli.js';
import { HOLD, LONG_HOLD_MS, runCli, startCli, waitForEvents } from './helpers/cli.js';

interface StatusJson {
  lockPath: string;
  holders: { node: string; owner: { pid: number }; fencingToken: string; ageMs: number }[];
  waiters: { node: string; owner: { pid: number }; fencingToken?: string }[];
}

describe('zklock status, ls and release', () => {
  let server: ZooKeeperServer;
  let client: ZooKeeperClient;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  const runs: CliRun[] = [];

  before(async () => {
    server = await ZooKeeperServer.start();
    client = await ZooKeeperClient.connect(server.connectString);
    dir = mkdtempSync(join(tmpdir(), 'zklock-cli-status-'));
    env = { ZOOKEEPER_CONNECT: server.connectString };
  });

  after(async () => {
    for (const run of runs) run.child.kill('SIGKILL');
    await client?.close();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('status --json lists the holder, then the waiters in queue order; ls counts them; release --force frees it', async () => {
    const log = join(dir, 'status.jsonl');
    // Held until release --force below takes the lock away.
    const holder = startCli(['exec', '/cli/status', '--', process.execPath, HOLD, log, String(LONG_HOLD_MS)], env);
    runs.push(holder);
    await waitForEvents(log, 'start');
    const waiters: CliRun[] = [];
    for (let i = 1; i <= 2; i++) {
      // One at a time, so their queue order is known.
      const waiter = startCli(['exec', '/cli/status', '--', process.execPath, HOLD, log, '0'], env);
      runs.push(waiter);
      waiters.push(waiter);
      await eventually(async () => (await client.getChildren('/cli/status')).children.length === i + 1);
    }

    const status = await runCli(['status', '--json', '/cli/status'], env);
    assert.equal(status.code, 0, status.stderr);
    const state = JSON.parse(status.stdout) as StatusJson;
    assert.equal(state.lockPath, '/cli/status');
    assert.deepEqual(state.holders.map((h) => h.owner.pid), [holder.child.pid]);
    assert.deepEqual(state.waiters.map((w) => w.owner.pid), waiters.map((w) => w.child.pid));
    assert.match(state.holders[0]!.fencingToken, /^\d+$/);
    // A waiter's czxid becomes a fencing token only if it gets the lock: shown as one, it would be a wait shown as a hold.
    assert.deepEqual(state.waiters.map((w) => 'fencingToken' in w), [false, false], 'no fencing token for a waiter');

    const text = await runCli(['status', '/cli/status'], env);
    assert.match(text.stdout, new RegExp(`holder\\s+\\S+:${holder.child.pid}\\s.*\\s${state.holders[0]!.fencingToken}\\s+exclusive\\s`), text.stdout);
    for (const [i, waiter] of waiters.entries()) {
      // ROLE OWNER HOLDING QUEUED FENCING TOKEN: '-' for both the hold and the token.
      assert.match(text.stdout, new RegExp(`waiter ${i + 1}\\s+\\S+:${waiter.child.pid}\\s+-\\s+\\S+\\s+-\\s`), text.stdout);
    }

    const ls = await runCli(['ls', '--json', '/cli'], env);
    assert.equal(ls.code, 0, ls.stderr);
    const locks = JSON.parse(ls.stdout) as { lockPath: string; holders: number; waiters: number; holder?: string }[];
    assert.deepEqual(locks.map((l) => [l.lockPath, l.holders, l.waiters]), [['/cli/status', 1, 2]]);
    assert.match(locks[0]!.holder ?? '', new RegExp(`:${holder.child.pid}$`));

    const refused = await runCli(['release', '--force', state.holders[0]!.node], env);
    assert.equal(refused.code, 2, 'no terminal and no --yes');
    assert.equal((await runCli(['release', state.holders[0]!.node, '--yes'], env)).code, 2, '--force is required');
    const released = await runCli(['release', '--force', '--yes', state.holders[0]!.node], env);
    assert.equal(released.code, 0, released.stderr);
    // The holder sees its node deleted: its command is stopped and it exits 75 (lock lost).
    assert.equal(await holder.exited(), 75, holder.stderr());
    assert.deepEqual(await Promise.all(waiters.map((w) => w.exited())), [0, 0]);

    const missing = await runCli(['status', '/cli/nothing-here'], env);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no lock at \/cli\/nothing-here/);
  });

  it('status takes a path for a semaphore only by the evidence ls and the ui go by: a folder named locks beside other locks is not one', async () => {
    // A root of its own (chroot): `/` there holds a mutex at /locks, so /locks holds contender nodes of its own.
    const root = '/cli-status-root';
    await client.ensurePath(`${root}/app/locks`);
    const rooted = { ZOOKEEPER_CONNECT: `${server.connectString}${root}` };
    await using rootHolder = await new Mutex(client, `${root}/locks`).acquire();
    // And a mutex whose own path also holds a folder named locks (other locks kept under it).
    await using appHolder = await new Mutex(client, `${root}/app`, { ownerId: 'app-holder' }).acquire();
    await using leaseA = await new Semaphore(client, `${root}/sem`, 3, { ownerId: 'sem-a' }).acquire();
    await using leaseB = await new Semaphore(client, `${root}/sem`, 3, { ownerId: 'sem-b' }).acquire();

    const status = async (path: string): Promise<{ holders: string[]; waiters: string[] }> => {
      const result = await runCli(['status', '--json', path], rooted);
      assert.equal(result.code, 0, result.stderr);
      const state = JSON.parse(result.stdout) as { holders: { node: string }[]; waiters: { node: string }[] };
      return { holders: state.holders.map((c) => c.node), waiters: state.waiters.map((c) => c.node) };
    };
    // Before, `/` was read as a semaphore with /locks as its queue: the holder of /locks showed as a waiter of `/`.
    assert.deepEqual(await status('/'), { holders: [], waiters: [] }, '/ is no lock: its locks child is a lock of its own');
    const text = await runCli(['status', '/'], rooted);
    assert.match(text.stdout, /^\/: free \(no holders, no waiters\)$/m);
    assert.deepEqual(await status('/app'), { holders: [appHolder.node.slice(root.length)], waiters: [] }, 'the mutex at /app, beside its locks folder');
    assert.deepEqual(await status('/locks'), { holders: [rootHolder.node.slice(root.length)], waiters: [] });
    assert.deepEqual((await status('/sem')).holders.sort(), [leaseA.node, leaseB.node].map((n) => n.slice(root.length)).sort(), 'a semaphore is still one');
  });
});
