import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { LockError, Mutex, Semaphore, ZooKeeperClient, ZooKeeperError } from '../../src/index.js';
import { DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_SESSION_TIMEOUT_MS } from '../../src/client/durations.js';
import type { ZooKeeperServer } from '../../src/testing/index.js';
import { FaultProxy } from '../../src/testing/index.js';
import { allocatePort } from '../../src/testing/loopback-ports.js';
import { harnessBound } from '../support/bounds.js';
import { serverFixture } from '../support/server-fixture.js';
import { eventually } from '../support/wait.js';
import { runCli, startCli, startCliInTerminal } from './helpers/cli.js';

/* What a newcomer trips over in the CLI: one way to write options, one meaning of a timeout of 0, messages that say what happened. */

const isCode = (code: string) => (error: unknown) => (error instanceof ZooKeeperError || error instanceof LockError) && error.code === code;

describe('zklock: consistent options, timeouts and messages', () => {
  const zk = serverFixture();
  let server: ZooKeeperServer;
  let client: ZooKeeperClient;
  let env: NodeJS.ProcessEnv;

  before(() => {
    ({ server, client } = zk);
    env = { ZOOKEEPER_CONNECT: server.connectString };
  });

  it('ls from / lists the locks under a /locks folder (it is not a semaphore) and still finds semaphores', async () => {
    await using held = await new Mutex(client, '/locks/ls-a').acquire();
    await using lease = await new Semaphore(client, '/sem/ls-b', 2).acquire();
    const result = await runCli(['ls', '--json'], env);
    assert.equal(result.code, 0, result.stderr);
    const locks = JSON.parse(result.stdout) as { lockPath: string; holders: number }[];
    assert.deepEqual(
      locks.map((l) => [l.lockPath, l.holders]),
      [
        ['/locks/ls-a', 1],
        ['/sem/ls-b', 1],
      ],
    );
    assert.ok(held.node && lease.node);
  });

  it('ls does not take a folder with an empty locks child for a semaphore (nothing shows it is one)', async () => {
    await client.ensurePath('/ls-empty/locks');
    const result = await runCli(['ls', '--json'], { ZOOKEEPER_CONNECT: `${server.connectString}/ls-empty` });
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), [], 'an empty /locks is a folder made ahead of any lock, not a semaphore at /');
  });

  it('server tells how to point the examples and the CLI at it (its port is not 2181)', async () => {
    const run = startCli(['server']);
    try {
      await eventually(() => /export ZOOKEEPER_CONNECT=.*\n/.test(run.stderr()), harnessBound(1), 'zklock server to say how to use it');
      const [connectString] = run.stdout().split('\n');
      assert.match(run.stderr(), new RegExp(`^zklock: to use it from another shell: export ZOOKEEPER_CONNECT=${connectString}$`, 'm'));
    } finally {
      run.child.kill('SIGINT');
      assert.equal(await run.exited(harnessBound(0, 1)), 0, run.stderr());
    }
  });

  it('server --port serves on the port asked for', async () => {
    const port = await allocatePort();
    const run = startCli(['server', '--port', String(port)]);
    try {
      await eventually(() => run.stdout().includes('\n'), harnessBound(1), 'zklock server to print its address');
      assert.equal(run.stdout().split('\n')[0], `127.0.0.1:${port}`);
      await using viaPort = await ZooKeeperClient.connect(`127.0.0.1:${port}`);
      assert.equal(viaPort.state, 'connected');
    } finally {
      run.child.kill('SIGINT');
      assert.equal(await run.exited(harnessBound(0, 1)), 0, run.stderr());
    }
    for (const bad of [['--port', '0'], ['--port', '70000'], ['--port', '2181', '--ensemble', '3']]) {
      const refused = await runCli(['server', ...bad]);
      assert.equal(refused.code, 2, `zklock server ${bad.join(' ')}: ${refused.stderr}`);
    }
  });

  it('exec takes its options after the lock path when the command follows "--", else says where they go', async () => {
    await using held = await new Mutex(client, '/cli/after-path').acquire();
    const taken = await runCli(['exec', '/cli/after-path', '--try', '--', process.execPath, '-e', ''], env);
    assert.equal(taken.code, 73, `--try after the path is exec's own option: ${taken.stderr}`);
    const unsure = await runCli(['exec', '/cli/after-path', '--try', 'echo', 'hi'], env);
    assert.equal(unsure.code, 2);
    assert.match(unsure.stderr, /put options before the lock path, or the command after "--"/);
    const unknown = await runCli(['exec', '/cli/after-path', '--tryy', '--', 'echo', 'hi'], env);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /"--tryy" between the lock path and "--" is not an option of exec/);
    for (const args of [['/cli/after-path', '--help', '--', 'true'], ['/cli/after-path', '--try', '-h', '--', 'true'], ['/cli/after-path', '--help']]) {
      const help = await runCli(['exec', ...args], env);
      assert.equal(help.code, 0, `zklock exec ${args.join(' ')} shows the help: ${help.stderr}`);
      assert.match(help.stdout, /Usage: zklock exec/);
    }
    assert.ok(held.node);
  });

  it('a timeout of 0 is a usage error everywhere: client calls, connect, acquire and the CLI (exit 2)', async () => {
    await assert.rejects(client.getData('/', { timeout: 0 }), isCode('INVALID_ARGUMENT'));
    await assert.rejects(client.waitForConnected({ timeout: 0 }), isCode('INVALID_ARGUMENT'), 'connected or not');
    await assert.rejects(ZooKeeperClient.connect(server.connectString, { timeout: 0 }), isCode('INVALID_ARGUMENT'));
    await assert.rejects(new Mutex(client, '/cli/zero').acquire({ timeout: 0 }), isCode('INVALID_ARGUMENT'));
    assert.equal(await client.exists('/cli/zero'), null, 'the refused acquire made no node');
    for (const args of [
      ['exec', '--timeout', '0', '/cli/zero', '--', 'true'],
      ['exec', '/cli/zero', '--connect-timeout', '0', '--', 'true'],
      ['exec', '--lock-delay', '0', '/cli/zero', '--', 'true'],
      ['status', '--session-timeout', '0', '/cli/zero'],
      ['ls', '--connect-timeout', '0'],
      ['server', '--tick-time', '0'],
    ]) {
      const result = await runCli(args, env);
      assert.equal(result.code, 2, `zklock ${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, /more than 0/, `zklock ${args.join(' ')}`);
    }
  });

  it('the CLI\'s session and connect timeouts default to the library\'s', async () => {
    await using fresh = await ZooKeeperClient.connect(server.connectString);
    assert.equal(fresh.sessionTimeout, DEFAULT_SESSION_TIMEOUT_MS, 'the server granted the default it was asked for');
    const help = await runCli(['exec', '--help']);
    assert.match(help.stdout, new RegExp(`--session-timeout <duration>[\\s\\S]*?\\(default: ${DEFAULT_SESSION_TIMEOUT_MS / 1000}s\\)`));
    assert.match(help.stdout, new RegExp(`--connect-timeout <duration>[\\s\\S]*?\\(default: ${DEFAULT_REQUEST_TIMEOUT_MS / 1000}s\\)`));
  });

  it('a request lost with its connection says CONNECTIONLOSS once', async () => {
    await using proxy = await FaultProxy.start({ targetPort: server.port });
    await using viaProxy = await ZooKeeperClient.connect(`127.0.0.1:${proxy.port}`);
    proxy.blackhole('upstream');
    const lost = viaProxy.getData('/');
    await proxy.waitForBytes('upstream', 1);
    proxy.resetAll();
    await assert.rejects(lost, (error: unknown) => {
      assert.ok(error instanceof ZooKeeperError && error.code === 'CONNECTIONLOSS', String(error));
      assert.doesNotMatch(error.message, /CONNECTIONLOSS: CONNECTIONLOSS/);
      assert.match(error.message, /^CONNECTIONLOSS: .*the outcome of the request is unknown/);
      return true;
    });
  });

  it('release --force asks as status shows a contender, warns of the grace period, and deletes nothing on "n"', async () => {
    await using held = await new Mutex(client, '/cli/release-ask', { ownerId: 'worker-7' }).acquire();
    const terminal = startCliInTerminal(['release', '--force', held.node], env);
    await eventually(() => terminal.screen().includes('Delete it? [y/N]'), undefined, 'the confirmation question');
    terminal.type('n\r');
    assert.equal(await terminal.exited(), 2);
    const screen = terminal.screen();
    assert.match(screen, /OWNER\s+AGE\s+FENCING TOKEN\s+SESSION/);
    assert.match(screen, new RegExp(`worker-7\\s+\\S+\\s+${held.fencingToken}\\s+0x${client.sessionId.toString(16)}`));
    assert.doesNotMatch(screen, /"pid"/, 'no raw owner JSON');
    assert.match(screen, /--grace/);
    assert.ok(held.held && (await client.exists(held.node)), 'not deleted');
  });

  it('on a narrow terminal the live line keeps the holder and its age; Ctrl-C while waiting says so and leaves no node', async () => {
    await using held = await new Mutex(client, '/cli/narrow-line', { ownerId: 'holder-host:4242' }).acquire();
    const terminal = startCliInTerminal(['exec', '/cli/narrow-line', '--', process.execPath, '-e', ''], env, 50);
    try {
      await eventually(() => /held by holder-host:4242 for (?:≥ )?\d+s/.test(terminal.screen()), undefined, 'the live line with the holder');
      terminal.type('\x03');
      assert.equal(await terminal.exited(), 130);
      assert.match(terminal.screen(), /zklock: interrupted by SIGINT while waiting for \/cli\/narrow-line; the command was not run/);
      await eventually(async () => (await client.getChildren('/cli/narrow-line')).children.length === 1, undefined, 'only the holder left');
      assert.ok(held.held);
    } finally {
      terminal.kill();
    }
  });
});
