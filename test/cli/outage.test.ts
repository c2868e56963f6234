import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Mutex, ZooKeeperClient } from '../../src/index.js';
import { ZooKeeperServer } from '../../src/testing/index.js';
import { LOAD_SLACK_MS, ROUND_TRIPS_MS, sessionBound } from '../support/bounds.js';
import { eventually } from '../support/wait.js';
import { startCli } from './helpers/cli.js';

const NODE = '_c_00000000-0000-4000-8000-000000000000-lock-0000000003';

describe('zklock with ZooKeeper out of reach', () => {
  let server: ZooKeeperServer;
  let client: ZooKeeperClient;

  before(async () => {
    server = await ZooKeeperServer.start();
    client = await ZooKeeperClient.connect(server.connectString);
  });

  after(async () => {
    await client?.close();
    await server?.stop();
  });

  it('exec waiting for a lock says what it waits for once the server is gone, and exits 69 when no new session comes within --connect-timeout', async () => {
    await new Mutex(client, '/cli/outage').acquire({ timeout: ROUND_TRIPS_MS });
    const connect = server.connectString;
    const waiter = startCli(['exec', '--session-timeout', '2s', '--connect-timeout', '3s', '/cli/outage', '--', 'true'], { ZOOKEEPER_CONNECT: connect });
    await eventually(async () => (await client.getChildren('/cli/outage')).children.length === 2, ROUND_TRIPS_MS, 'the waiter queued');
    await server.stop();
    const stopped = Date.now();
    // Which hosts it waits for and why it cannot reach them, before the session is even over.
    await eventually(() => /lost the connection to ZooKeeper .*; waiting for 127\.0\.0\.1:\d+/.test(waiter.stderr()) && /ECONNREFUSED/.test(waiter.stderr()), sessionBound(2000), 'the waiter said what it waits for');
    // The client concludes expiry within 5/3 of the session timeout; then 3 s for a new session.
    const code = await waiter.exited(sessionBound(2000) + 3000 + LOAD_SLACK_MS);
    assert.equal(code, 69, waiter.stderr());
    const stderr = waiter.stderr();
    assert.match(stderr, /the session expired .*at most 3s \(--connect-timeout\), else exit 69/);
    assert.match(stderr, /zklock: the session expired and 127\.0\.0\.1:\d+ gave no new one within 3s \(--connect-timeout\); last error: .*ECONNREFUSED/);
    assert.ok(Date.now() - stopped >= 3000, 'not before the bound');
    assert.equal(connect, server.connectString);
  });

  it('status, ls, release, revoke and ui say at once why a host is refused or unresolvable, and exit 69 after a short bound', async () => {
    const commands = [['status', '/x'], ['ls', '/'], ['release', '--force', '--yes', `/x/${NODE}`], ['revoke', '/x'], ['ui', '--port', '0']];
    const hosts = [
      { connect: '127.0.0.1:1', cause: /connect ECONNREFUSED 127\.0\.0\.1:1/ },
      { connect: 'no-such-host.invalid:2181', cause: /ENOTFOUND no-such-host\.invalid/ },
    ];
    const runs = hosts.flatMap(({ connect, cause }) => commands.map((args) => ({ args, cause, started: Date.now(), run: startCli([...args, '--connect', connect]) })));
    for (const { args, cause, started, run } of runs) {
      // Said while it still retries: the line that names the cause comes before the exit.
      await eventually(() => cause.test(run.stderr()), ROUND_TRIPS_MS, `zklock ${args.join(' ')} named the cause`);
      const code = await run.exited(ROUND_TRIPS_MS);
      assert.equal(code, 69, `zklock ${args.join(' ')}: ${run.stderr()}`);
      const lines = run.stderr().trim().split('\n');
      assert.match(lines[0]!, /retrying for at most 5s \(--connect-timeout\)$/, `zklock ${args.join(' ')}: ${run.stderr()}`);
      assert.match(lines.at(-1)!, /cannot connect to ZooKeeper at .*: TIMEOUT: not connected within 5000 ms/);
      // 5 s, not the 20 s of a request timeout; the rest is a loaded machine starting node.
      assert.ok(Date.now() - started < 5000 + LOAD_SLACK_MS, `zklock ${args.join(' ')} took ${Date.now() - started} ms`);
    }
  });
});
