import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Mutex, ZooKeeperClient } from '../../src/index.js';
import { FaultProxy, ZooKeeperServer } from '../../src/testing/index.js';
import { ROUND_TRIPS_MS } from '../support/bounds.js';
import { eventually } from '../support/wait.js';
import { runCli, startCli } from './helpers/cli.js';

// These tests run the built CLI: `npm run build` first.
describe('zklock exec: a missing chroot, signals while waiting, and durations', () => {
  let server: ZooKeeperServer;
  let client: ZooKeeperClient;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    server = await ZooKeeperServer.start();
    client = await ZooKeeperClient.connect(server.connectString);
    env = { ZOOKEEPER_CONNECT: server.connectString };
  });
  after(async () => {
    await client?.close();
    await server?.stop();
  });

  for (const mode of [['--try'], []]) {
    it(`exec ${mode.join(' ')} under a missing chroot exits 1 at once, naming the chroot`, async () => {
      const result = await runCli(['exec', ...mode, '/locks/chroot', '--', 'true'], { ZOOKEEPER_CONNECT: `${server.connectString}/missing-chroot` }, ROUND_TRIPS_MS);
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stderr, /CHROOT_MISSING: the chroot \/missing-chroot of the connect string does not exist/);
      assert.equal(await client.exists('/missing-chroot'), null);
    });
  }

  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    it(`exec waiting for a held lock exits ${code} on ${signal} and deletes its contender node`, async () => {
      const path = `/signals/${signal}`;
      const holder = await new Mutex(client, path).acquire();
      const waiter = startCli(['exec', path, '--', 'true'], env);
      await eventually(async () => (await client.getChildren(path)).children.length === 2, ROUND_TRIPS_MS, 'the waiter queued');
      waiter.child.kill(signal);
      assert.equal(await waiter.exited(ROUND_TRIPS_MS), code, waiter.stderr());
      assert.deepEqual((await client.getChildren(path)).children, [holder.node.slice(path.length + 1)], 'only the holder is left');
      await holder.release();
    });
  }

  it('exec --try whose requests get no answer exits 130 on SIGINT instead of waiting for them', async () => {
    const proxy = await FaultProxy.start({ targetPort: server.port });
    try {
      // The session is established, then the connection goes silent: tryAcquire's create never gets a reply.
      proxy.onChunk((event) => {
        if (event.direction === 'downstream') proxy.blackhole();
      });
      // A long session: the CLI would notice the silence only after two thirds of it.
      const waiter = startCli(['exec', '--try', '--session-timeout', '120s', '/signals/try', '--', 'true'], { ZOOKEEPER_CONNECT: proxy.connectString });
      await eventually(() => proxy.stats().droppedUpstreamBytes > 0, ROUND_TRIPS_MS, 'the CLI sent a request into the silence');
      waiter.child.kill('SIGINT');
      assert.equal(await waiter.exited(ROUND_TRIPS_MS), 130, waiter.stderr());
    } finally {
      await proxy.close();
    }
  });

  it('refuses durations a timer cannot hold, naming the flag, and takes a --timeout beyond them', async () => {
    for (const args of [['--grace', '600h'], ['--session-timeout', '0'], ['--connect-timeout', '700h']]) {
      const result = await runCli(['exec', ...args, '/signals/flags', '--', 'true'], env, ROUND_TRIPS_MS);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, new RegExp(`${args[0]}.*${args[1]}`));
    }
    // 720h (30 days) is more than a timer holds: the lock recipe chains timers, so the free lock is taken.
    const long = await runCli(['exec', '--timeout', '720h', '/signals/flags', '--', 'true'], env, ROUND_TRIPS_MS);
    assert.equal(long.code, 0, long.stderr);
  });
});
