import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:tls';
import type { ConnectionOptions, TLSSocket } from 'node:tls';
import { after, describe, it } from 'node:test';
import { ZooKeeperEnsemble, ZooKeeperServer } from '../../src/testing/index.js';
import { assertNoJvmLeftBehind } from './helpers/processes.js';
import { ZooKeeperClient } from '../../src/index.js';
import { harnessBound } from '../support/bounds.js';

function tlsConnect(options: ConnectionOptions): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = connect(options);
    socket.once('secureConnect', () => resolve(socket));
    socket.once('error', reject);
  });
}

// keytool and the start, each bounded by the harness, and the stop.
describe('ZooKeeperServer with tls: true', { timeout: harnessBound(2, 1) }, () => {
  const server = new ZooKeeperServer({ tls: true });

  after(async () => {
    await server.close();
  });

  it('starts with a secure client port and a self-signed certificate for 127.0.0.1 and localhost', async (t) => {
    const started = performance.now();
    await server.start();
    t.diagnostic(`TLS server start (keytool included): ${(performance.now() - started).toFixed(0)} ms`);
    const pem = server.tlsCertificatePem;
    assert.ok(pem !== undefined);
    const certificate = new X509Certificate(pem);
    assert.equal(certificate.subject, 'CN=127.0.0.1');
    assert.match(certificate.subjectAltName ?? '', /IP Address:127\.0\.0\.1/);
    assert.match(certificate.subjectAltName ?? '', /DNS:localhost/);
    assert.equal(server.secureConnectString, `127.0.0.1:${server.securePort}`);
  });

  it('completes a verified TLS handshake and a ZooKeeper session on the secure port', async () => {
    const socket = await tlsConnect({ host: '127.0.0.1', port: server.securePort, ca: server.tlsCertificatePem });
    assert.equal(socket.authorized, true);
    socket.destroy();
    const client = await ZooKeeperClient.connect(server.secureConnectString!, { tls: { ca: server.tlsCertificatePem } });
    try {
      assert.ok(client.sessionTimeout > 0);
      assert.notEqual(client.sessionId, 0n);
      await client.create('/over-tls', 'secret');
    } finally {
      await client.close();
    }
    // Same server behind both ports: the plain port sees the znode written over TLS.
    const plain = await ZooKeeperClient.connect(server.connectString);
    try {
      assert.equal((await plain.getData('/over-tls')).data.toString(), 'secret');
    } finally {
      await plain.close();
    }
  });

  it('is not trusted by a client without the certificate', async () => {
    await assert.rejects(tlsConnect({ host: '127.0.0.1', port: server.securePort }), (error: NodeJS.ErrnoException) => {
      assert.match(error.code ?? '', /SELF_SIGNED/);
      return true;
    });
  });

  it('listens on 127.0.0.1 only, the secure port included', { skip: !existsSync('/proc/net/tcp') && 'needs Linux /proc' }, () => {
    // ZooKeeper binds secureClientPort to 0.0.0.0 unless secureClientPortAddress is set.
    const listeners = readFileSync('/proc/net/tcp', 'utf8')
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .filter((fields) => fields[3] === '0A')
      .map((fields) => fields[1] ?? '');
    for (const port of [server.port, server.securePort ?? 0]) {
      const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
      assert.deepEqual(
        listeners.filter((address) => address.endsWith(`:${hexPort}`)),
        [`0100007F:${hexPort}`],
      );
    }
  });

  it('keeps the plain port answering four-letter words', async () => {
    assert.equal(await server.fourLetterWord('ruok'), 'imok');
  });
});

describe('ZooKeeperEnsemble with tls: true', { timeout: harnessBound(2, 1) }, () => {
  it('serves TLS on every member with one shared certificate', async () => {
    await using ensemble = await ZooKeeperEnsemble.start({ tls: true });
    const addresses = ensemble.secureConnectString?.split(',') ?? [];
    assert.equal(addresses.length, 3);
    for (const member of ensemble.members) {
      const client = await ZooKeeperClient.connect(member.secureConnectString!, { tls: { ca: ensemble.tlsCertificatePem } });
      assert.notEqual(client.sessionId, 0n);
      await client.close();
    }
  });
});

it('leaves no JVM of this test process behind', async () => {
  await assertNoJvmLeftBehind();
});
