import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ZooKeeperClient } from '../../src/index.js';
import { ZooKeeperServer } from '../../src/testing/index.js';

describe('TLS', () => {
  let server: ZooKeeperServer;

  before(async () => {
    server = await ZooKeeperServer.start({ tls: true });
  });
  after(async () => {
    await server?.close();
  });

  it('runs a session over the secure client port, verifying the server certificate', async () => {
    const client = await ZooKeeperClient.connect(server.secureConnectString!, { tls: { ca: server.tlsCertificatePem! } });
    try {
      await client.create('/tls-node', 'over tls');
      assert.equal((await client.getData('/tls-node')).data.toString(), 'over tls');
    } finally {
      await client.close();
    }
  });

  it('refuses a server certificate it does not trust', async () => {
    await assert.rejects(
      ZooKeeperClient.connect(server.secureConnectString!, { tls: {}, timeout: 3000 }),
      { code: 'TIMEOUT' },
    );
  });
});
