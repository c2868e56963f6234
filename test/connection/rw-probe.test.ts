import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { HostPort } from '../../src/connection/index.js';
import { ReadWriteSeeker, servesReadWrite } from '../../src/connection/hosts/rw-probe.js';
import { ZooKeeperServer } from '../../src/testing/index.js';
import { ROUND_TRIPS_MS } from '../support/bounds.js';
import { expectNothingLeft, openResources } from '../support/resources.js';
import { deferred } from '../support/wait.js';

/** A peer that is not ZooKeeper: it treats each connection as `behave` says. */
async function peer(behave: (socket: net.Socket) => void): Promise<{ host: HostPort; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    behave(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    host: { host: '127.0.0.1', port },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const NO_ABORT = new AbortController().signal;

describe('probing for a read/write server', () => {
  let server: ZooKeeperServer;

  before(async () => {
    server = await ZooKeeperServer.start();
  });
  after(async () => {
    await server?.close();
  });

  it('a serving standalone server answers "rw"', async () => {
    assert.equal(await servesReadWrite({ host: '127.0.0.1', port: server.port }, ROUND_TRIPS_MS, undefined, NO_ABORT), true);
  });

  it('anything but "rw" is no: a refusal, an endless answer, silence, an abort; no socket is left behind', async () => {
    const resourcesBefore = openResources();
    const refusing = await peer((socket) => socket.end('isro is not executed because it is not in the whitelist.\n'));
    const endless = await peer((socket) => {
      const timer = setInterval(() => socket.write('rw'.repeat(64)), 1);
      socket.on('close', () => clearInterval(timer));
    });
    const silent = await peer(() => undefined);
    try {
      assert.equal(await servesReadWrite(refusing.host, ROUND_TRIPS_MS, undefined, NO_ABORT), false);
      assert.equal(await servesReadWrite(endless.host, ROUND_TRIPS_MS, undefined, NO_ABORT), false);
      assert.equal(await servesReadWrite(silent.host, 200, undefined, NO_ABORT), false, 'bounded by its timeout');
      const aborting = new AbortController();
      const aborted = servesReadWrite(silent.host, ROUND_TRIPS_MS, undefined, aborting.signal);
      aborting.abort();
      assert.equal(await aborted, false);
    } finally {
      await Promise.all([refusing.close(), endless.close(), silent.close()]);
    }
    await expectNothingLeft(resourcesBefore);
  });

  it('the seeker reports nothing once stopped, even a probe that was in flight', async () => {
    const answer = deferred<boolean>();
    const asked = deferred<void>();
    const found: HostPort[] = [];
    const seeker = new ReadWriteSeeker(
      () => {
        asked.resolve();
        return answer.promise;
      },
      (host) => found.push(host),
    );
    seeker.start([{ host: '127.0.0.1', port: server.port }]);
    await asked.promise;
    seeker.stop();
    answer.resolve(true);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(found, []);
  });
});
