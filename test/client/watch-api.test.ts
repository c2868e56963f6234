import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { WatchEvent } from '../../src/index.js';
import { ZooKeeperClient } from '../../src/index.js';
import { FaultProxy, ZooKeeperServer } from '../../src/testing/index.js';
import { OpCode, ZK_ERROR } from '../../src/protocol/index.js';
import { within } from '../recipes/fixtures.js';
import { ROUND_TRIPS_MS } from '../support/bounds.js';
import { serverFixture } from '../support/server-fixture.js';
import { serverWatches } from '../support/server-watches.js';
import { deferred, eventually, nextEvent } from '../support/wait.js';

/** Java's removeWatches, removeAllWatches, checkWatches and whoAmI, against the server's own word (wchc). */
describe('watch removal, watch checks and whoAmI', () => {
  // The fixture's client changes the nodes; `client` is the one under test.
  const zk = serverFixture();
  let client: ZooKeeperClient;
  before(async () => (client = await ZooKeeperClient.connect(zk.server.connectString)));
  after(() => client?.close());

  const watching = async (path: string): Promise<boolean> => (await serverWatches(zk.server, client.sessionId)).includes(path);

  it('removeWatcher tells the removed watcher (dataWatchRemoved / childWatchRemoved) and rejects NOWATCHER when nothing matched', async () => {
    await zk.client.create('/wa-remove');
    const heard: WatchEvent[] = [];
    const watcher = (event: WatchEvent): void => void heard.push(event);
    await client.getData('/wa-remove', { watch: watcher });
    await client.getChildren('/wa-remove', { watch: watcher });
    assert.ok(await watching('/wa-remove'));
    await client.removeWatcher('/wa-remove', watcher);
    assert.deepEqual(heard, [
      { type: 'dataWatchRemoved', path: '/wa-remove' },
      { type: 'childWatchRemoved', path: '/wa-remove' },
    ]);
    await eventually(async () => !(await watching('/wa-remove')), ROUND_TRIPS_MS, 'the server watch is gone');
    await assert.rejects(client.removeWatcher('/wa-remove', watcher), { code: 'NOWATCHER', op: 'removeWatcher', path: '/wa-remove' });
    await zk.client.setData('/wa-remove', 'x');
    await client.sync('/');
    assert.equal(heard.length, 2, 'nothing after the removal');
  });

  it('removeAllWatches removes every watcher of a class on a path, each told once, and rejects NOWATCHER when there was none', async () => {
    await zk.client.create('/wa-all');
    const heard: string[] = [];
    const a = (event: WatchEvent): void => void heard.push(`a ${event.type}`);
    const b = (event: WatchEvent): void => void heard.push(`b ${event.type}`);
    const c = (event: WatchEvent): void => void heard.push(`c ${event.type}`);
    await client.getData('/wa-all', { watch: a });
    await client.exists('/wa-all', { watch: b });
    await client.getChildren('/wa-all', { watch: c });
    await client.removeAllWatches('/wa-all', 'data');
    assert.deepEqual(heard.sort(), ['a dataWatchRemoved', 'b dataWatchRemoved']);
    await client.checkWatches('/wa-all', 'children');
    await assert.rejects(client.checkWatches('/wa-all', 'data'), { code: 'NOWATCHER', op: 'checkWatches', path: '/wa-all' });
    await assert.rejects(client.removeAllWatches('/wa-all', 'data'), { code: 'NOWATCHER', op: 'removeAllWatches', path: '/wa-all' });
    await client.removeAllWatches('/wa-all', 'any');
    assert.deepEqual(heard.sort(), ['a dataWatchRemoved', 'b dataWatchRemoved', 'c childWatchRemoved']);
    await eventually(async () => !(await watching('/wa-all')), ROUND_TRIPS_MS, 'no server watch left');
    await assert.rejects(client.checkWatches('/wa-all', 'any'), { code: 'NOWATCHER' });
    await assert.rejects(client.removeAllWatches('/wa-all', 'any'), { code: 'NOWATCHER' });
    await assert.rejects(client.removeAllWatches('/wa-all', 'persistent' as never), { code: 'INVALID_ARGUMENT', op: 'removeAllWatches' });
  });

  it('whoAmI lists the identities of the session; a server without it (before 3.7) is UNIMPLEMENTED', async () => {
    const authed = await ZooKeeperClient.connect(zk.server.connectString, { auth: [{ scheme: 'digest', auth: 'alice:secret' }] });
    const identities = await authed.whoAmI().finally(() => authed.close());
    assert.deepEqual(
      identities.map((id) => id.scheme).sort(),
      ['digest', 'ip'],
    );
    assert.deepEqual(identities.find((id) => id.scheme === 'digest'), { scheme: 'digest', user: 'alice' });
    // A 3.6 server answers an opcode it does not know with UNIMPLEMENTED and closes the connection.
    const proxy = await FaultProxy.start({
      targetPort: zk.server.port,
      onRequest: (request) => (request.opcode === OpCode.whoAmI ? { error: ZK_ERROR.UNIMPLEMENTED, close: true } : 'forward'),
    });
    const old = await ZooKeeperClient.connect(proxy.connectString);
    try {
      await within(assert.rejects(old.whoAmI(), { code: 'UNIMPLEMENTED', op: 'whoAmI' }), ROUND_TRIPS_MS, 'whoAmI');
    } finally {
      await old.close();
      await proxy.close();
    }
  });
});

describe('getConfig under a chroot', () => {
  const SUPER = { user: 'super', password: 'super-pw' };
  let server: ZooKeeperServer;
  let superUser: ZooKeeperClient;

  before(async () => {
    server = await ZooKeeperServer.start({ superDigest: SUPER });
    // Only a super user may write the config node: a write plays a reconfiguration for its watches.
    superUser = await ZooKeeperClient.connect(server.connectString, { auth: [{ scheme: 'digest', auth: `${SUPER.user}:${SUPER.password}` }] });
    await superUser.create('/app');
  });
  after(async () => {
    await superUser?.close();
    await server?.close();
  });

  it('getConfig answers the config typed (members, roles, version), under a chroot too', async () => {
    const rooted = await ZooKeeperClient.connect(`${server.connectString}/app`, { sessionTimeout: 10_000 });
    const before = await superUser.getData('/zookeeper/config');
    try {
      const written = 'server.1=127.0.0.1:2888:3888:participant;0.0.0.0:2181\nversion=100000000';
      await superUser.setData('/zookeeper/config', written);
      for (const client of [rooted, superUser]) {
        const { data, config } = await client.getConfig();
        assert.equal(data.toString(), written);
        assert.equal(config.text, written);
        assert.equal(config.version, 0x100000000n);
        assert.deepEqual(config.members.map((m) => [m.id, m.role]), [[1, 'participant']]);
      }
    } finally {
      await superUser.setData('/zookeeper/config', before.data);
      await rooted.close();
    }
  });

  it('reads /zookeeper/config outside the chroot, and its watch fires, also after a reconnect', async () => {
    const proxy = await FaultProxy.start({ targetPort: server.port });
    const rooted = await ZooKeeperClient.connect(`${proxy.connectString}/app`, { sessionTimeout: 10_000 });
    try {
      await assert.rejects(rooted.getData('/zookeeper/config'), { code: 'NONODE' }, 'a plain read is below the chroot');
      const first = deferred<WatchEvent>();
      const { stat } = await rooted.getConfig({ watch: first.resolve });
      assert.equal(stat.version, (await superUser.exists('/zookeeper/config'))!.version);
      await superUser.setData('/zookeeper/config', 'v1');
      assert.deepEqual(await within(first.promise, ROUND_TRIPS_MS, 'the config watch fires'), { type: 'dataChanged', path: '/zookeeper/config' });

      const second = deferred<WatchEvent>();
      assert.equal((await rooted.getConfig({ watch: second.resolve })).data.toString(), 'v1');
      const suspended = nextEvent(rooted, 'suspended');
      proxy.refuseNew(true);
      proxy.resetAll();
      await suspended;
      const reconnected = nextEvent(rooted, 'reconnected', ROUND_TRIPS_MS);
      proxy.refuseNew(false);
      await reconnected;
      await rooted.sync('/');
      await superUser.setData('/zookeeper/config', 'v2');
      assert.deepEqual(await within(second.promise, ROUND_TRIPS_MS, 'the config watch, registered again, fires'), { type: 'dataChanged', path: '/zookeeper/config' });
    } finally {
      await rooted.close();
      await proxy.close();
    }
  });
});
