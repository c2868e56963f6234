import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ProxyFlow } from '../../src/testing/proxy-flow.js';

/** Two connected loopback sockets: what is written to `near` arrives at `far`. */
async function socketPair(server: Server): Promise<{ near: Socket; far: Socket }> {
  const address = server.address();
  assert.ok(address !== null && typeof address !== 'string');
  const accepted = once(server, 'connection') as Promise<[Socket]>;
  const near = connect(address.port, '127.0.0.1');
  await once(near, 'connect');
  const [far] = await accepted;
  return { near, far };
}

describe('ProxyFlow', () => {
  let server: Server;
  before(async () => {
    server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
  });
  after(() => server.close());

  it('waits for one drain, however many delayed chunks meet a full destination', async () => {
    // source → proxy: `input.near` writes, `input.far` is the flow's source.
    // proxy → destination: the flow writes to `output.near`; `output.far` does not read, so the
    // kernel's buffers fill and writes return false.
    const input = await socketPair(server);
    const output = await socketPair(server);
    output.far.pause();
    try {
      await drainOnce(input, output);
    } finally {
      for (const socket of [input.near, input.far, output.near, output.far]) socket.destroy();
    }
  });
});

/** Sends 200 chunks of 64 KiB through a flow with latency into a destination that does not read, then lets it read. */
async function drainOnce(input: { near: Socket; far: Socket }, output: { near: Socket; far: Socket }): Promise<void> {
  let peak = 0;
  const flow = new ProxyFlow(input.far, output.near, () => ({ blackholed: false, latencyMs: 20 }), () => {
    peak = Math.max(peak, output.near.listenerCount('drain'));
  });
  const chunk = Buffer.alloc(64 * 1024, 1);
  // Many chunks within one latency window: they come due together, in one flush.
  for (let i = 0; i < 200; i++) input.near.write(chunk);
  const deadline = Date.now() + 5_000;
  while (output.near.writableLength === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 200));
  peak = Math.max(peak, output.near.listenerCount('drain'));
  assert.ok(output.near.writableLength > 0, 'the destination never backed up: the test proves nothing');
  assert.ok(peak <= 1, `${peak} 'drain' listeners on the destination (one wait is enough)`);
  // Everything still arrives once the destination reads again.
  let received = 0;
  output.far.on('data', (data: Buffer) => (received += data.length));
  output.far.resume();
  const until = Date.now() + 10_000;
  while (received < 200 * chunk.length && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  assert.equal(received, 200 * chunk.length);
  assert.equal(flow.forwardedBytes, 200 * chunk.length);
}
