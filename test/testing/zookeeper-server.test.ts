import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { findHarnessProcesses, isHarnessError, isProcessAlive, ZooKeeperServer } from '../../src/testing/index.js';
import { assertNoJvmLeftBehind } from './helpers/processes.js';
import { CREATOR_ALL_ACL, ZooKeeperClient } from '../../src/index.js';
import { harnessBound } from '../support/bounds.js';

// Each suite's bound counts its server starts and stops, each bounded by the harness itself.
describe('ZooKeeperServer', { timeout: harnessBound(4, 5) }, () => {
  const server = new ZooKeeperServer();

  after(async () => {
    await server.close();
  });

  it('starts a standalone server that answers ruok and srvr', async (t) => {
    const started = performance.now();
    await server.start();
    const elapsedMs = performance.now() - started;
    t.diagnostic(`standalone start: ${elapsedMs.toFixed(0)} ms`);
    assert.equal(server.state, 'running');
    assert.equal(server.connectString, `127.0.0.1:${server.port}`);
    assert.equal(await server.fourLetterWord('ruok'), 'imok');
    assert.equal((await server.status())?.mode, 'standalone');
    assert.equal(server.securePort, undefined);
    const pid = server.pid;
    assert.ok(pid !== undefined && (await isProcessAlive(pid)));
    const marked = await findHarnessProcesses(process.pid);
    assert.ok(marked.some((p) => p.pid === pid), 'the JVM carries the owner marker');
    assert.match(readFileSync(server.logFile, 'utf8'), /binding to port/);
  });

  it('grants session timeouts within the defaults (min 2 × tickTime, max 60 s)', async () => {
    const short = await ZooKeeperClient.connect(server.connectString, { sessionTimeout: 10 });
    const long = await ZooKeeperClient.connect(server.connectString, { sessionTimeout: 600_000 });
    try {
      assert.equal(short.sessionTimeout, 1_000);
      assert.equal(long.sessionTimeout, 60_000);
    } finally {
      await short.close();
      await long.close();
    }
  });

  it('has TTL nodes disabled unless extendedTypes is set', async () => {
    const client = await ZooKeeperClient.connect(server.connectString);
    try {
      await assert.rejects(client.create('/ttl', '', { mode: 'PERSISTENT_WITH_TTL', ttl: 60_000 }), { code: 'UNIMPLEMENTED' });
    } finally {
      await client.close();
    }
  });

  it('restarts on the same port with the same data', async () => {
    const before = await ZooKeeperClient.connect(server.connectString);
    await before.create('/survives-restart', 'hello');
    await before.close();
    const { port } = server;
    const zxidBefore = (await server.status())?.zxid ?? -1n;
    const pidBefore = server.pid;

    await server.restart();

    assert.equal(server.port, port);
    assert.notEqual(server.pid, pidBefore);
    assert.ok(((await server.status())?.zxid ?? -1n) >= zxidBefore, 'zxid does not go backwards');
    const afterRestart = await ZooKeeperClient.connect(server.connectString);
    try {
      assert.equal((await afterRestart.getData('/survives-restart')).data.toString(), 'hello');
    } finally {
      await afterRestart.close();
    }
  });

  it('pause makes the server silent and resume brings it back', async () => {
    await server.pause();
    assert.equal(server.state, 'paused');
    await assert.rejects(server.fourLetterWord('ruok', { timeoutMs: 500 }), (error) =>
      isHarnessError(error, 'FOUR_LETTER_WORD_TIMEOUT'),
    );
    await server.resume();
    assert.equal(server.state, 'running');
    assert.equal(await server.fourLetterWord('ruok'), 'imok');
  });

  it('stop and kill both leave no process behind', async () => {
    const stoppedPid = server.pid;
    assert.ok(stoppedPid !== undefined);
    await server.stop();
    assert.equal(server.state, 'stopped');
    assert.equal(server.pid, undefined);
    assert.equal(await isProcessAlive(stoppedPid), false);

    await server.start();
    const killedPid = server.pid;
    assert.ok(killedPid !== undefined);
    await server.kill();
    assert.equal(server.state, 'stopped');
    assert.equal(await isProcessAlive(killedPid), false);
    await assert.rejects(server.fourLetterWord('ruok'), (error) => isHarnessError(error, 'FOUR_LETTER_WORD_FAILED'));
  });

  it('a paused server can still be stopped', async () => {
    await server.start();
    await server.pause();
    const pid = server.pid;
    assert.ok(pid !== undefined);
    await server.stop();
    assert.equal(await isProcessAlive(pid), false);
  });

  it('close removes the temporary directory and is idempotent', async () => {
    const dir = server.directory;
    assert.ok(existsSync(dir));
    await server.close();
    await server.close();
    assert.equal(server.state, 'closed');
    assert.equal(existsSync(dir), false);
    await assert.rejects(server.start(), (error) => isHarnessError(error, 'INVALID_STATE'));
  });
});

describe('ZooKeeperServer options', { timeout: harnessBound(1, 1) }, () => {
  const SUPER = { user: 'super', password: 'letmein' };
  let server: ZooKeeperServer;

  before(async () => {
    server = await ZooKeeperServer.start({
      extendedTypes: true,
      superDigest: SUPER,
      tickTime: 200,
      maxSessionTimeout: 5_000,
      config: { maxClientCnxns: 17 },
    });
  });
  after(async () => {
    await server?.close();
  });

  it('applies tickTime, session bounds and extra config entries', async () => {
    const conf = await server.fourLetterWord('conf');
    assert.match(conf, /tickTime=200\b/);
    assert.match(conf, /maxSessionTimeout=5000\b/);
    assert.match(conf, /maxClientCnxns=17\b/, 'config entries override the harness defaults');
    const client = await ZooKeeperClient.connect(server.connectString, { sessionTimeout: 10 });
    assert.equal(client.sessionTimeout, 400);
    await client.close();
  });

  it('extendedTypes enables TTL nodes', async () => {
    const client = await ZooKeeperClient.connect(server.connectString);
    try {
      await client.create('/ttl', '', { mode: 'PERSISTENT_WITH_TTL', ttl: 60_000 });
      assert.ok(await client.exists('/ttl'));
    } finally {
      await client.close();
    }
  });

  it('superDigest makes a super user that bypasses ACLs', async () => {
    const owner = await ZooKeeperClient.connect(server.connectString);
    const stranger = await ZooKeeperClient.connect(server.connectString);
    const superUser = await ZooKeeperClient.connect(server.connectString);
    try {
      await owner.addAuth('digest', 'owner:pw');
      await owner.create('/private', 'secret', { acl: CREATOR_ALL_ACL });
      await assert.rejects(stranger.getData('/private'), { code: 'NOAUTH' });
      await superUser.addAuth('digest', `${SUPER.user}:${SUPER.password}`);
      assert.equal((await superUser.getData('/private')).data.toString(), 'secret');
    } finally {
      await Promise.all([owner.close(), stranger.close(), superUser.close()]);
    }
  });
});

describe('ZooKeeperServer start failures', { timeout: harnessBound(2, 1) }, () => {
  let parent: string;
  before(() => {
    parent = mkdtempSync(join(tmpdir(), 'zklock-failure-test-'));
  });
  after(() => {
    rmSync(parent, { recursive: true, force: true });
  });

  it('a JVM that exits reports PROCESS_EXITED with the log tail and leaves nothing behind', async () => {
    await assert.rejects(ZooKeeperServer.start({ jvmArgs: ['-XX:+NoSuchZklockOption'], tempDir: parent }), (error) => {
      assert.ok(isHarnessError(error, 'PROCESS_EXITED'), String(error));
      assert.match(error.context.logTail, /Unrecognized VM option/);
      assert.match(error.message, /Unrecognized VM option/);
      return true;
    });
    assert.deepEqual(readdirSync(parent), [], 'the temporary directory is removed');
  });

  it('a server that is not ready in time reports START_TIMEOUT and is killed', async () => {
    const server = new ZooKeeperServer({ startTimeoutMs: 50, tempDir: parent });
    try {
      await assert.rejects(server.start(), (error) => {
        assert.ok(isHarnessError(error, 'START_TIMEOUT'), String(error));
        assert.equal(error.context.timeoutMs, 50);
        return true;
      });
      assert.equal(server.state, 'stopped');
    } finally {
      await server.close();
    }
    assert.deepEqual(readdirSync(parent), []);
  });

  it('rejects invalid options with INVALID_OPTIONS, before creating anything', async () => {
    await assert.rejects(ZooKeeperServer.start({ tickTime: -1, tempDir: parent }), (error) => isHarnessError(error, 'INVALID_OPTIONS'));
    await assert.rejects(ZooKeeperServer.start({ config: { clientPort: 2181 }, tempDir: parent }), (error) => {
      assert.ok(isHarnessError(error, 'INVALID_OPTIONS'), String(error));
      assert.equal(error.context.option, 'config.clientPort');
      return true;
    });
    assert.deepEqual(readdirSync(parent), []);
  });
});

it('leaves no JVM of this test process behind', async () => {
  await assertNoJvmLeftBehind();
});
