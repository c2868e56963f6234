import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { describe, it } from 'node:test';
import { ZooKeeperClient } from '../../src/index.js';
import { ROUND_TRIPS_MS } from '../support/bounds.js';
import { within } from '../recipes/fixtures.js';

/**
 * close() while a connection attempt is under way used to leave its socket and its connect timer
 * running until the attempt timed out (up to a third of the session timeout), then emit
 * connectionError after `closed`. Staged with a TLS client against a server that accepts TCP and
 * never answers, so the attempt hangs in its handshake.
 */
describe('close() while connecting', () => {
  it('ends the attempt at once: its socket goes, and nothing is emitted after closed', async () => {
    const accepted: net.Socket[] = [];
    // Reading (and dropping) what arrives, so that the client's end is seen.
    const silent = net.createServer((socket) => accepted.push(socket.resume()));
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const { port } = silent.address() as net.AddressInfo;
    // A connect timeout of 40 s (a third of the session timeout): the bound below is half of it.
    const client = new ZooKeeperClient(`127.0.0.1:${port}`, { sessionTimeout: 120_000, tls: { rejectUnauthorized: false } });
    const events: string[] = [];
    client.on('closed', () => events.push('closed'));
    client.on('connectionError', () => events.push('connectionError'));
    try {
      while (accepted.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      const serverSide = accepted[0]!;
      const ended = once(serverSide, 'close');
      await client.close();
      await within(ended, ROUND_TRIPS_MS, 'the client dropped its half-open attempt');
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(events, ['closed']);
    } finally {
      for (const socket of accepted) socket.destroy();
      silent.close();
    }
  });
});
