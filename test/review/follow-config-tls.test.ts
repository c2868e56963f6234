import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ZooKeeperClient } from '../../src/index.js';
import { ZooKeeperServer } from '../../src/testing/index.js';
import { ROUND_TRIPS_MS } from '../support/bounds.js';
import { within } from '../recipes/fixtures.js';

describe('review: followConfig on a TLS client', () => {
  const SUPER = { user: 'super', password: 'super-pw' };
  let server: ZooKeeperServer;
  let superUser: ZooKeeperClient;

  before(async () => {
    server = await ZooKeeperServer.start({ tls: true, superDigest: SUPER });
    superUser = await ZooKeeperClient.connect(server.connectString, { auth: [{ scheme: 'digest', auth: `${SUPER.user}:${SUPER.password}` }] });
  });
  after(async () => {
    await superUser?.close();
    await server?.close();
  });

  it('a config naming the members as every config does (their plain clientPort; secureClientPort is never in it) leaves a TLS client able to reach the ensemble', async () => {
    const client = await ZooKeeperClient.connect(server.secureConnectString!, { tls: { ca: server.tlsCertificatePem! }, followConfig: true, sessionTimeout: 6000 });
    try {
      await client.sync('/');
      // What a reconfiguration publishes: the member's quorum ports and its (plain) client address.
      await superUser.setData('/zookeeper/config', `server.1=127.0.0.1:1:2:participant;${server.connectString}\nversion=200000001`);
      // The follower has read it once a request behind its read is answered; the client must still work after that.
      await within(client.sync('/').catch(() => undefined), ROUND_TRIPS_MS, 'a sync');
      await within(client.sync('/'), ROUND_TRIPS_MS, 'the TLS client still reaches the server');
      assert.equal(client.state, 'connected');
    } finally {
      await client.close();
    }
  });
});
