import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ZooKeeperError } from '../../src/index.js';
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

  it('refuses followConfig with tls (INVALID_ARGUMENT): a config names only the plain client ports, where a TLS client would be stranded', async () => {
    // What following would do: the config a reconfiguration publishes names the member's plain
    // clientPort (secureClientPort is never in it); the TLS handshakes there fail until the session expires.
    for (const tls of [{ ca: server.tlsCertificatePem! }, true] as const) {
      await assert.rejects(ZooKeeperClient.connect(server.secureConnectString!, { tls, followConfig: true }), (error: ZooKeeperError) => {
        assert.equal(error.code, 'INVALID_ARGUMENT');
        assert.match(error.message, /followConfig/);
        return true;
      });
    }
    // Without following, the same options connect.
    const client = await ZooKeeperClient.connect(server.secureConnectString!, { tls: { ca: server.tlsCertificatePem! }, followConfig: false });
    await client.close();
  });

  it('refuses a server certificate it does not trust', async () => {
    await assert.rejects(
      ZooKeeperClient.connect(server.secureConnectString!, { tls: {}, timeout: 3000 }),
      { code: 'TIMEOUT' },
    );
  });
});
