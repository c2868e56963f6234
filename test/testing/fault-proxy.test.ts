import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { FaultProxy, isHarnessError } from '../../src/testing/index.js';
import { ROUND_TRIPS_MS } from '../support/bounds.js';

/** A local TCP peer standing in for a server: records what it receives, can echo, can send. */
class Peer {
  readonly sockets: Socket[] = [];
  received = Buffer.alloc(0);
  readonly #server: Server;

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(echo: boolean): Promise<Peer> {
    const server = createServer({ allowHalfOpen: true });
    const peer = new Peer(server);
    server.on('connection', (socket) => {
      peer.sockets.push(socket);
      socket.on('error', () => undefined);
      socket.on('data', (chunk: Buffer) => {
        peer.received = Buffer.concat([peer.received, chunk]);
        if (echo) socket.write(chunk);
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return peer;
  }

  get port(): number {
    const address = this.#server.address();
    assert.ok(address !== null && typeof address !== 'string');
    return address.port;
  }

  async nextConnection(): Promise<Socket> {
    const count = this.sockets.length;
    await until(() => this.sockets.length > count);
    const socket = this.sockets.at(-1);
    assert.ok(socket !== undefined);
    return socket;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

/** A client socket that records what it receives and how it ended. */
class Client {
  received = Buffer.alloc(0);
  closeError: NodeJS.ErrnoException | undefined;
  /** The peer sent FIN. */
  ended = false;
  closed = false;
  readonly socket: Socket;

  constructor(port: number) {
    this.socket = connect({ host: '127.0.0.1', port, allowHalfOpen: true });
    this.socket.on('data', (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk]);
    });
    this.socket.on('end', () => {
      this.ended = true;
    });
    this.socket.on('error', (error) => {
      this.closeError = error;
    });
    this.socket.on('close', () => {
      this.closed = true;
    });
  }

  static async connect(port: number): Promise<Client> {
    const client = new Client(port);
    await once(client.socket, 'connect');
    return client;
  }
}

async function until(condition: () => boolean, timeoutMs = ROUND_TRIPS_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(5);
  }
}

// Long enough for a loopback byte to arrive many times over, short enough to keep the suite fast.
const SILENCE_MS = 200;

describe('FaultProxy', { timeout: 30_000 }, () => {
  let peer: Peer;
  let proxy: FaultProxy;
  let clients: Client[];

  async function startWith(echo: boolean): Promise<void> {
    peer = await Peer.start(echo);
    proxy = await FaultProxy.start({ targetPort: peer.port });
  }

  async function connectClient(): Promise<{ client: Client; server: Socket }> {
    const serverSide = peer.nextConnection();
    const client = await Client.connect(proxy.port);
    clients.push(client);
    return { client, server: await serverSide };
  }

  beforeEach(() => {
    clients = [];
  });
  afterEach(async () => {
    for (const client of clients) client.socket.destroy();
    await proxy.close();
    await peer.close();
  });

  it('passes bytes through both ways and counts them', async () => {
    await startWith(true);
    assert.equal(proxy.connectString, `127.0.0.1:${proxy.port}`);
    const { client } = await connectClient();
    client.socket.write('hello');
    await until(() => client.received.toString() === 'hello');
    await until(() => proxy.stats().downstreamBytes === 5);
    assert.deepEqual(proxy.stats(), {
      totalConnections: 1,
      activeConnections: 1,
      refusedConnections: 0,
      upstreamBytes: 5,
      downstreamBytes: 5,
      droppedUpstreamBytes: 0,
      droppedDownstreamBytes: 0,
    });
    assert.equal(proxy.connections[0]?.upstreamBytes, 5);
  });

  it('black-holes upstream only: client bytes vanish, server bytes still arrive, the connection stays open', async () => {
    await startWith(false);
    const { client, server } = await connectClient();
    proxy.blackhole('upstream');
    client.socket.write('lost');
    server.write('still flowing');
    await until(() => client.received.toString() === 'still flowing');
    await sleep(SILENCE_MS);
    assert.equal(peer.received.length, 0, 'no client byte reached the server');
    assert.equal(proxy.stats().droppedUpstreamBytes, 4);
    assert.equal(client.closed, false);

    proxy.passThrough();
    client.socket.write('ok');
    await until(() => peer.received.toString() === 'ok');
  });

  it('black-holes downstream only: server bytes vanish, client bytes still arrive', async () => {
    await startWith(false);
    const { client, server } = await connectClient();
    proxy.blackhole('downstream');
    server.write('lost');
    client.socket.write('still flowing');
    await until(() => peer.received.toString() === 'still flowing');
    await sleep(SILENCE_MS);
    assert.equal(client.received.length, 0, 'no server byte reached the client');
    assert.equal(proxy.stats().droppedDownstreamBytes, 4);
    assert.equal(client.closed, false);
  });

  it('black-holes both ways, FIN included: a half-open connection', async () => {
    await startWith(true);
    const { client, server } = await connectClient();
    proxy.blackhole('both');
    client.socket.write('ping');
    server.end();
    await sleep(SILENCE_MS);
    assert.equal(peer.received.length, 0);
    assert.equal(client.received.length, 0);
    assert.equal(client.closed, false, 'the client never learns that the server closed');
  });

  it('resetAll destroys current connections with ECONNRESET on the client', async () => {
    await startWith(true);
    const { client, server } = await connectClient();
    assert.equal(proxy.resetAll(), 1);
    await until(() => client.closed && server.destroyed);
    assert.equal(client.closeError?.code, 'ECONNRESET');
    await until(() => proxy.stats().activeConnections === 0);
  });

  it('refuseNew resets new connections but keeps current ones', async () => {
    await startWith(true);
    const { client: existing } = await connectClient();
    proxy.refuseNew(true);
    const refused = new Client(proxy.port);
    clients.push(refused);
    await until(() => refused.closed);
    assert.equal(refused.received.length, 0);
    assert.equal(refused.closeError?.code, 'ECONNRESET');
    assert.equal(proxy.stats().refusedConnections, 1);

    existing.socket.write('still here');
    await until(() => existing.received.toString() === 'still here');

    proxy.refuseNew(false);
    const { client: accepted } = await connectClient();
    accepted.socket.write('welcome');
    await until(() => accepted.received.toString() === 'welcome');
  });

  it('delays delivery by at least the configured latency, per direction', async () => {
    await startWith(false);
    const { client, server } = await connectClient();
    proxy.latency('upstream', 300);
    const sentAt = performance.now();
    client.socket.write('slow');
    await until(() => peer.received.length === 4);
    const upstreamDelay = performance.now() - sentAt;
    assert.ok(upstreamDelay >= 299, `upstream took ${upstreamDelay.toFixed(0)} ms`);

    // Per direction, shown by order rather than by a clock: with upstream held for longer than
    // the test lasts, a downstream chunk sent after an upstream one still arrives.
    proxy.latency('upstream', 10 * ROUND_TRIPS_MS);
    client.socket.write('held');
    server.write('fast');
    await until(() => client.received.toString() === 'fast');
    assert.equal(peer.received.toString(), 'slow', 'the upstream chunk is still held');
  });

  it('keeps chunk order when latency is lowered while bytes are in flight', async () => {
    await startWith(false);
    const { client } = await connectClient();
    proxy.latency('upstream', 200);
    client.socket.write('first,');
    await until(() => proxy.connections[0] !== undefined);
    await sleep(20);
    proxy.latency('upstream', 0);
    client.socket.write('second');
    await until(() => peer.received.length === 12);
    assert.equal(peer.received.toString(), 'first,second');
  });

  it('can cut a connection right after a given number of upstream bytes was forwarded', async () => {
    await startWith(true);
    const { client } = await connectClient();
    // The "request" is the first 7 bytes; its answer must never reach the client.
    const unsubscribe = proxy.onChunk((event) => {
      if (event.direction === 'upstream' && !event.dropped && event.forwardedBytes >= 7) event.connection.blackhole('downstream');
    });
    client.socket.write('request');
    await proxy.waitForBytes('upstream', 7);
    await until(() => peer.received.toString() === 'request');
    await sleep(SILENCE_MS);
    assert.equal(client.received.length, 0, 'the echo was cut');
    assert.equal(proxy.stats().droppedDownstreamBytes, 7);
    unsubscribe();
  });

  it('waitForBytes is bounded', async () => {
    await startWith(true);
    await assert.rejects(proxy.waitForBytes('upstream', 1, { timeoutMs: 50 }), (error) => isHarnessError(error, 'WAIT_TIMEOUT'));
  });

  it('close ends connections and stops listening', async () => {
    await startWith(true);
    const { client } = await connectClient();
    await proxy.close();
    await until(() => client.ended);
    const late = new Client(proxy.port);
    clients.push(late);
    await until(() => late.closed);
    assert.equal(late.closeError?.code, 'ECONNREFUSED');
  });

  it('resets the client when the target refuses the connection', async () => {
    await startWith(true);
    const vanished = await Peer.start(true);
    const deadTarget = await FaultProxy.start({ targetPort: vanished.port });
    await vanished.close();
    const client = new Client(deadTarget.port);
    clients.push(client);
    await until(() => client.closed);
    assert.equal(client.closeError?.code, 'ECONNRESET');
    await deadTarget.close();
  });
});

it('a rewriteUpstream that throws resets its own connection only, and the error is rethrown on its own', { timeout: 3 * ROUND_TRIPS_MS }, async () => {
  const script = fileURLToPath(new URL('./fixtures/throwing-rewriter.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 2 * ROUND_TRIPS_MS, killSignal: 'SIGKILL' });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  assert.equal(code, 0, err);
  const result = JSON.parse(out.trim().split('\n').pop() ?? '') as { first: string; second: string; uncaught: string[] };
  assert.equal(result.first, 'ECONNRESET', 'the connection whose rewriter failed is reset');
  assert.equal(result.second, 'echo b', 'the next connection is forwarded');
  assert.deepEqual(result.uncaught, ['boom: rewriter factory']);
});
