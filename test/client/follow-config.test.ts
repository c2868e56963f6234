import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ZooKeeperClient, ZooKeeperError, parseEnsembleConfig } from '../../src/index.js';
import { FaultProxy, ZooKeeperServer, asZooKeeper35 } from '../../src/testing/index.js';
import { ROUND_TRIPS_MS, sessionBound } from '../support/bounds.js';
import { eventually, nextEvent } from '../support/wait.js';

describe('parseEnsembleConfig', () => {
  it('reads members, roles, client addresses (a wildcard one at the quorum host) and the hex version; skips what it cannot read', () => {
    const config = parseEnsembleConfig(
      [
        'server.3=10.0.0.3:2888:3888:observer;0.0.0.0:2183',
        'server.1=10.0.0.1:2888:3888:participant;10.0.1.1:2181',
        'server.2=10.0.0.2:2888:3888;2182',
        'server.4=[::1]:2888:3888|10.0.0.4:2888:3888:participant;[::1]:2184',
        'server.5=10.0.0.5:2888:3888',
        'server.6=garbage',
        'version=10000000a',
      ].join('\n'),
    );
    assert.equal(config.version, 0x10000000an);
    assert.deepEqual(
      config.members.map((m) => [m.id, m.role, m.host, m.quorumPort, m.electionPort, m.clientAddress]),
      [
        [1, 'participant', '10.0.0.1', 2888, 3888, '10.0.1.1:2181'],
        [2, 'participant', '10.0.0.2', 2888, 3888, '10.0.0.2:2182'],
        [3, 'observer', '10.0.0.3', 2888, 3888, '10.0.0.3:2183'],
        [4, 'participant', '[::1]', 2888, 3888, '[::1]:2184'],
        [5, 'participant', '10.0.0.5', 2888, 3888, undefined],
      ],
    );
    assert.equal(config.connectString, '10.0.1.1:2181,10.0.0.2:2182,10.0.0.3:2183,[::1]:2184');
    assert.deepEqual(parseEnsembleConfig(Buffer.alloc(0)), { version: 0n, members: [], connectString: '', text: '' });
  });

  it('a member whose client address is the IPv6 wildcard is reached at its quorum host (ZooKeeper prints :: as [0:0:0:0:0:0:0:0], Inet6Address.getHostAddress)', () => {
    const config = parseEnsembleConfig(
      ['server.1=10.0.0.1:2888:3888:participant;[0:0:0:0:0:0:0:0]:2181', 'server.2=10.0.0.2:2888:3888:participant;0.0.0.0:2181', 'server.3=10.0.0.3:2888:3888:participant;[::]:2181', 'version=100000000'].join('\n'),
    );
    assert.equal(config.connectString, '10.0.0.1:2181,10.0.0.2:2181,10.0.0.3:2181');
  });

  it('reconfig refuses a malformed request before sending anything (INVALID_ARGUMENT)', async () => {
    // Not connected: a request that passed its checks would wait for a connection, not reject at once.
    const client = new ZooKeeperClient('127.0.0.1:1', { requestTimeout: 60_000 });
    try {
      const invalid = (e: unknown): boolean => e instanceof ZooKeeperError && e.code === 'INVALID_ARGUMENT';
      await assert.rejects(client.reconfig({}), invalid);
      await assert.rejects(client.reconfig({ leaving: [0] }), invalid);
      await assert.rejects(client.reconfig({ joining: ['server.4=a:1:2;3,server.5=b:1:2;3'] }), invalid);
      await assert.rejects(client.reconfig({ members: ['server.1=a:1:2;3'], leaving: [2] }), invalid);
      await assert.rejects(client.reconfig({ leaving: [2], fromConfig: 5 as unknown as bigint }), invalid);
      assert.throws(() => new ZooKeeperClient('127.0.0.1:1', { followConfig: 'yes' as unknown as boolean }), invalid);
    } finally {
      await client.close();
    }
  });
});

describe('followConfig against a server whose /zookeeper/config a super user writes', () => {
  const SUPER = { user: 'super', password: 'super-pw' };
  let server: ZooKeeperServer;
  let superUser: ZooKeeperClient;
  let version = 0x200000000n;

  /** Plays a reconfiguration for the config watchers: one member, reached at `clientAddress`. */
  async function publish(clientAddress: string): Promise<void> {
    version += 1n;
    await superUser.setData('/zookeeper/config', `server.1=127.0.0.1:1:2:participant;${clientAddress}\nversion=${version.toString(16)}`);
  }

  /** A followConfig client through a proxy of its own (`chroot` appended), both closed after `body`. */
  async function following(chroot: string, sessionTimeout: number, body: (client: ZooKeeperClient, proxy: FaultProxy, byName: string) => Promise<void>): Promise<void> {
    const proxy = await FaultProxy.start({ targetPort: server.port });
    try {
      const client = await ZooKeeperClient.connect(`${proxy.connectString}${chroot}`, { followConfig: true, sessionTimeout });
      try {
        await body(client, proxy, `localhost:${server.port}`);
      } finally {
        await client.close();
      }
    } finally {
      await proxy.close();
    }
  }

  before(async () => {
    server = await ZooKeeperServer.start({ superDigest: SUPER });
    superUser = await ZooKeeperClient.connect(server.connectString, { auth: [{ scheme: 'digest', auth: `${SUPER.user}:${SUPER.password}` }] });
  });
  after(async () => {
    await superUser?.close();
    await server?.close();
  });

  it('reconfig is a 3.5 operation (a 3.5 server gets it), typed when the server refuses it: RECONFIGDISABLED from a standalone server', async () => {
    const proxy = await FaultProxy.start({ targetPort: server.port, onRequest: asZooKeeper35() });
    const admin = await ZooKeeperClient.connect(proxy.connectString, { auth: [{ scheme: 'digest', auth: `${SUPER.user}:${SUPER.password}` }] });
    try {
      await assert.rejects(admin.reconfig({ leaving: [2] }), (e) => e instanceof ZooKeeperError && e.code === 'RECONFIGDISABLED' && e.path === '/zookeeper/config');
      assert.equal(admin.state, 'connected');
    } finally {
      await admin.close();
      await proxy.close();
    }
  });

  it('moves to each new address, also after the application removed the config watch and across a reconnect', async () => {
    await following('', 10_000, async (client, proxy, byName) => {
      const session = client.sessionId;
      // A standalone server's config names no member: nothing to follow, the client stays.
      await client.sync('/');
      assert.equal(client.server, proxy.connectString);

      await publish(byName);
      await eventually(() => client.state === 'connected' && client.server === byName, ROUND_TRIPS_MS, 'the client on the published address');

      // The application removes every data watch on the node, the follower's included: it sets its own again.
      await client.removeAllWatches('/zookeeper/config', 'data');
      await publish(proxy.connectString);
      await eventually(() => client.state === 'connected' && client.server === proxy.connectString, ROUND_TRIPS_MS, 'the client back on the proxy');

      // A change made while the client is cut off is read on the reconnect.
      proxy.refuseNew(true);
      const suspended = nextEvent(client, 'suspended');
      proxy.resetAll();
      await suspended;
      await publish(byName);
      proxy.refuseNew(false);
      await eventually(() => client.state === 'connected' && client.server === byName, ROUND_TRIPS_MS, 'the client on the address published while it was away');
      assert.equal(client.sessionId, session);
    });
  });

  it('under a chroot, reads the config again with the new session after its session expired (the old one took its watch along)', async () => {
    // The config node lies outside every chroot: the follower reads and watches it there all the same.
    await following('/followed', 2000, async (client, proxy, byName) => {
      await publish(proxy.connectString);
      await eventually(() => client.state === 'connected' && client.server === proxy.connectString, ROUND_TRIPS_MS, 'the client on the proxy');
      const session = client.sessionId;
      const expired = nextEvent(client, 'expired', sessionBound(2000));
      proxy.refuseNew(true);
      proxy.resetAll();
      await expired;
      await publish(byName);
      proxy.refuseNew(false);
      await eventually(() => client.state === 'connected' && client.server === byName, sessionBound(2000), 'the new session on the address published meanwhile');
      assert.notEqual(client.sessionId, session);
      assert.equal(client.chroot, '/followed');
    });
  });

});
