import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { fourLetterWord, isHarnessError, parseServerStatus } from '../../src/testing/index.js';
import { DEFAULT_FOUR_LETTER_WORD_TIMEOUT_MS } from '../../src/testing/four-letter-word.js';
import { allocatePort } from '../../src/testing/loopback-ports.js';

const SRVR_ANSWER = `Zookeeper version: 3.8.0-abc, built on 2024-12-29 17:54 UTC
Latency min/avg/max: 0/0.0/0
Received: 3
Sent: 2
Connections: 1
Outstanding: 0
Zxid: 0x100000002
Mode: follower
Node count: 7
`;

async function listen(onConnection: (socket: Socket) => void): Promise<{ server: Server; port: number }> {
  const server = createServer(onConnection);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  assert.ok(address !== null && typeof address !== 'string');
  return { server, port: address.port };
}

describe('fourLetterWord', { timeout: 10_000 }, () => {
  const servers: Server[] = [];
  after(() => {
    for (const server of servers) server.close();
  });

  it('sends the word and resolves with the whole answer once the server closes', async () => {
    let word = '';
    const { server, port } = await listen((socket) => {
      socket.once('data', (chunk: Buffer) => {
        word = chunk.toString();
        socket.end(SRVR_ANSWER);
      });
    });
    servers.push(server);
    assert.equal(await fourLetterWord(port, 'srvr'), SRVR_ANSWER);
    assert.equal(word, 'srvr');
  });

  it('times out (FOUR_LETTER_WORD_TIMEOUT) against a server that never answers', async () => {
    const { server, port } = await listen(() => undefined);
    servers.push(server);
    const started = performance.now();
    await assert.rejects(fourLetterWord(port, 'ruok', { timeoutMs: 200 }), (error) => {
      assert.ok(isHarnessError(error, 'FOUR_LETTER_WORD_TIMEOUT'), String(error));
      assert.equal(error.context.timeoutMs, 200);
      return true;
    });
    // Our 200 ms, not the default, ended the wait: it ends before the default could have.
    assert.ok(performance.now() - started < DEFAULT_FOUR_LETTER_WORD_TIMEOUT_MS);
  });

  it('fails (FOUR_LETTER_WORD_FAILED) when nothing listens', async () => {
    const port = await allocatePort();
    await assert.rejects(fourLetterWord(port, 'ruok'), (error) => {
      assert.ok(isHarnessError(error, 'FOUR_LETTER_WORD_FAILED'), String(error));
      assert.equal(error.context.cause, 'ECONNREFUSED');
      return true;
    });
  });
});

describe('parseServerStatus', () => {
  it('reads mode, zxid, node count and version', () => {
    assert.deepEqual(parseServerStatus(SRVR_ANSWER), {
      mode: 'follower',
      zxid: 0x100000002n,
      nodeCount: 7,
      version: '3.8.0-abc, built on 2024-12-29 17:54 UTC',
    });
  });

  it('returns undefined for a server that is not serving', () => {
    assert.equal(parseServerStatus('This ZooKeeper instance is not currently serving requests\n'), undefined);
  });
});
