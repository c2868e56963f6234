import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { describe, it } from 'node:test';
import { ZooKeeperClient, isZooKeeperError } from '../../src/index.js';

/** A loopback port nothing listens on: taken, then given back. */
async function closedPort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

describe('connect() that times out', () => {
  it('says why: its TIMEOUT has the last connection failure as its cause', async () => {
    const port = await closedPort();
    // Refused attempts fail within milliseconds: this timeout leaves room for many.
    const error: unknown = await ZooKeeperClient.connect(`127.0.0.1:${port}`, { timeout: 3000 }).then(
      () => assert.fail('connected to a closed port'),
      (e: unknown) => e,
    );
    assert.ok(isZooKeeperError(error, 'TIMEOUT'), String(error));
    assert.ok(isZooKeeperError(error.cause, 'CONNECTIONLOSS'), `the cause is the failed connection: ${String(error.cause)}`);
    assert.equal((error.cause.cause as NodeJS.ErrnoException).code, 'ECONNREFUSED');
  });
});
