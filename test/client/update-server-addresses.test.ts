import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ZooKeeperClient, ZooKeeperError } from '../../src/index.js';
import { FaultProxy, ZooKeeperEnsemble } from '../../src/testing/index.js';
import { ROUND_TRIPS_MS, sessionBound } from '../support/bounds.js';
import { eventually, nextEvent } from '../support/wait.js';

const SESSION_MS = 6000;

describe('updateServerAddresses on a 3-member ensemble', () => {
  let ensemble: ZooKeeperEnsemble;
  let admin: ZooKeeperClient;

  before(async () => {
    ensemble = await ZooKeeperEnsemble.start({ size: 3, tickTime: 200 });
    admin = await ZooKeeperClient.connect(ensemble.connectString);
  });
  after(async () => {
    await admin?.close();
    await ensemble?.close();
  });

  it('a client whose server leaves the list moves to one in it, its session and ephemeral node kept', async () => {
    const [m1, m2, m3] = ensemble.members.map((m) => m.connectString);
    const client = await ZooKeeperClient.connect(m1!, { sessionTimeout: SESSION_MS });
    try {
      await client.create('/usa-ephemeral', '', { mode: 'EPHEMERAL' });
      const session = client.sessionId;
      const reconnected = nextEvent(client, 'reconnected', sessionBound(SESSION_MS));
      client.updateServerAddresses(`${m2},${m3}`);
      await reconnected;
      assert.ok([m2, m3].includes(client.server), `now on ${client.server}`);
      assert.equal(client.sessionId, session);
      await admin.sync('/usa-ephemeral');
      assert.equal((await admin.exists('/usa-ephemeral'))?.ephemeralOwner, session);
    } finally {
      await client.close();
    }
  });

  it('a client in the middle of a handshake with a server that leaves the list drops it: it does not end up on a server no longer listed', async () => {
    const [m1, m2] = ensemble.members;
    const proxy = await FaultProxy.start({ targetPort: m1!.port });
    const client = await ZooKeeperClient.connect(proxy.connectString, { sessionTimeout: SESSION_MS });
    try {
      const session = client.sessionId;
      // The next handshake through the proxy is answered, but late: the list changes while it is on its way.
      proxy.latency('downstream', 1000);
      const before = proxy.stats().totalConnections;
      const suspended = nextEvent(client, 'suspended');
      proxy.resetAll();
      await suspended;
      await eventually(() => proxy.stats().totalConnections > before && proxy.stats().activeConnections > 0, ROUND_TRIPS_MS, 'a new attempt through the proxy');
      assert.notEqual(client.state, 'connected');
      client.updateServerAddresses(m2!.connectString);
      await client.waitForConnected({ timeout: sessionBound(SESSION_MS) });
      await client.exists('/', { timeout: ROUND_TRIPS_MS });
      assert.equal(client.server, m2!.connectString);
      assert.equal(client.sessionId, session);
    } finally {
      await client.close();
      await proxy.close();
    }
  });

  it('a client whose server stays in a list of the same size stays; a changed chroot is INVALID_ARGUMENT', async () => {
    const [m1, m2] = ensemble.members.map((m) => m.connectString);
    const client = await ZooKeeperClient.connect(m1!, { sessionTimeout: SESSION_MS });
    try {
      let suspended = 0;
      client.on('suspended', () => suspended++);
      client.updateServerAddresses(m1!);
      assert.throws(() => client.updateServerAddresses(`${m2}/elsewhere`), (e) => e instanceof ZooKeeperError && e.code === 'INVALID_ARGUMENT');
      await client.exists('/');
      assert.equal(client.server, m1);
      assert.equal(suspended, 0);
    } finally {
      await client.close();
    }
  });

  it('a list grown from 1 to 3 members: about 2 in 3 clients move, over both new members, their sessions kept', async () => {
    const m1 = ensemble.members[0]!.connectString;
    const clients = await Promise.all(Array.from({ length: 30 }, () => ZooKeeperClient.connect(m1, { sessionTimeout: SESSION_MS })));
    try {
      const sessions = clients.map((c) => c.sessionId);
      for (const client of clients) client.updateServerAddresses(ensemble.connectString);
      // A client that moves lost its connection at once (closed synchronously): wait for every one.
      await Promise.all(clients.map((c) => c.waitForConnected({ timeout: sessionBound(SESSION_MS) })));
      await Promise.all(clients.map((c) => c.exists('/', { timeout: ROUND_TRIPS_MS })));
      assert.deepEqual(clients.map((c) => c.sessionId), sessions);
      const where = new Map<string, number>();
      for (const c of clients) where.set(c.server!, (where.get(c.server!) ?? 0) + 1);
      const moved = clients.length - (where.get(m1) ?? 0);
      // Binomial(30, 2/3): mean 20; outside [10, 28] with probability below 1e-4.
      assert.ok(moved >= 10 && moved <= 28, `${moved} of 30 moved: ${JSON.stringify([...where])}`);
      for (const m of ensemble.members.slice(1)) assert.ok((where.get(m.connectString) ?? 0) > 0, `none went to ${m.connectString}: ${JSON.stringify([...where])}`);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });
});
