import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ZooKeeperClient } from '../../src/index.js';
import { FaultProxy, ZooKeeperServer } from '../../src/testing/index.js';
import { CLOSE_TIMEOUT_MS } from '../../src/connection/index.js';
import { LOAD_SLACK_MS, ROUND_TRIPS_MS } from '../support/bounds.js';
import { nextEvent } from '../support/wait.js';

/** Long enough that a node still there after close() is the session's doing, not its expiry. */
const SESSION_MS = 20_000;
/** ZooKeeper's opcode of getData. */
const GET_DATA = 4;

/**
 * close() while the connection is down (a brief disconnect: suspended, not yet reconnected) used
 * to resolve at once and leave the session, and its ephemeral nodes, on the server for the whole
 * session timeout. It ends the session over a connection of its own now.
 */
describe('close() while disconnected', () => {
  let server: ZooKeeperServer;
  let observer: ZooKeeperClient;

  before(async () => {
    server = await ZooKeeperServer.start({ maxSessionTimeout: 60_000 });
    observer = await ZooKeeperClient.connect(server.connectString);
  });
  after(async () => {
    await observer?.close();
    await server?.close();
  });

  /** A client through a proxy holding an ephemeral node, suspended: its connection reset, new ones refused. */
  async function suspendedWithEphemeral(name: string): Promise<{ proxy: FaultProxy; client: ZooKeeperClient }> {
    const proxy = await FaultProxy.start({ targetPort: server.port });
    const client = await ZooKeeperClient.connect(proxy.connectString, { sessionTimeout: SESSION_MS });
    await client.create(name, '', { mode: 'EPHEMERAL' });
    const suspended = nextEvent(client, 'suspended', ROUND_TRIPS_MS);
    proxy.refuseNew(true);
    proxy.resetAll();
    await suspended;
    return { proxy, client };
  }

  it('ends the session over a fresh connection: the ephemeral nodes are gone once close() resolves', async () => {
    const { proxy, client } = await suspendedWithEphemeral('/cd-ephemeral');
    try {
      assert.equal(client.sessionTimeout, SESSION_MS);
      // The server is reachable again, the client not reconnected yet (its attempts were refused).
      proxy.refuseNew(false);
      const started = performance.now();
      await client.close();
      const took = performance.now() - started;
      await observer.sync('/');
      assert.equal(await observer.exists('/cd-ephemeral'), null, `the ephemeral node went with close() (it took ${Math.round(took)} ms)`);
      assert.ok(took < SESSION_MS / 4, `close() took ${Math.round(took)} ms`);
      assert.equal(client.state, 'closed');
    } finally {
      await client.close();
      await proxy.close();
    }
  });

  it('keeps to its close timeout when the server answers slowly: the handshake and the closeSession share one deadline', async () => {
    const { proxy, client } = await suspendedWithEphemeral('/cd-slow');
    try {
      // Each phase of the fresh connection (handshake, closeSession) takes 0.9 of the close
      // timeout: either fits a bound of its own, both do not fit one bound for the whole close.
      proxy.latency('downstream', Math.round(CLOSE_TIMEOUT_MS * 0.9));
      proxy.refuseNew(false);
      const started = performance.now();
      await client.close();
      const took = performance.now() - started;
      assert.equal(client.state, 'closed');
      // Not LOAD_SLACK_MS, which would hide the defect (the sum of the phases, 1.8 times the timeout).
      assert.ok(took < CLOSE_TIMEOUT_MS * 1.5, `close() took ${Math.round(took)} ms (close timeout ${CLOSE_TIMEOUT_MS} ms)`);
    } finally {
      await proxy.close();
    }
  });

  it('on a connection gone silent before its read deadline, still ends the session: the closeSession does not take the whole bound', async () => {
    // The connection looks up (its read deadline is far off) but a request dropped on it leaves
    // it silent: the closeSession sent on it goes unanswered. It used to wait out the whole close
    // timeout there, leaving no time for a fresh connection (explore: close-leaves-nodes).
    let dropping = false;
    let dropped = (): void => undefined;
    const droppedOne = new Promise<void>((resolve) => (dropped = resolve));
    const proxy = await FaultProxy.start({
      targetPort: server.port,
      onRequest: (request) => {
        if (!dropping || request.opcode !== GET_DATA) return 'forward';
        dropped();
        return 'drop';
      },
    });
    const client = await ZooKeeperClient.connect(proxy.connectString, { sessionTimeout: SESSION_MS });
    try {
      await client.create('/cd-silent', '', { mode: 'EPHEMERAL' });
      dropping = true;
      client.getData('/cd-silent').catch(() => undefined);
      await droppedOne;
      assert.equal(client.state, 'connected');
      const started = performance.now();
      await client.close();
      const took = performance.now() - started;
      await observer.sync('/');
      assert.equal(await observer.exists('/cd-silent'), null, `the ephemeral node went with close() (it took ${Math.round(took)} ms)`);
      assert.ok(took < CLOSE_TIMEOUT_MS + LOAD_SLACK_MS, `close() took ${Math.round(took)} ms`);
    } finally {
      await client.close();
      await proxy.close();
    }
  });

  for (const [how, silence] of [
    ['refuses connections', (): void => undefined],
    // Accepted, never answered: each attempt is cut short by what is left of the close timeout.
    [
      'accepts connections and never answers',
      (proxy: FaultProxy): void => {
        proxy.blackhole();
        proxy.refuseNew(false);
      },
    ],
  ] as const) {
    it(`resolves within its close timeout when the server ${how}; the node then stays until the server expires the session`, async () => {
      const node = `/cd-unreachable-${how.split(' ')[0]}`;
      const { proxy, client } = await suspendedWithEphemeral(node);
      try {
        silence(proxy);
        const started = performance.now();
        await client.close();
        const took = performance.now() - started;
        assert.ok(took < CLOSE_TIMEOUT_MS + LOAD_SLACK_MS, `close() took ${Math.round(took)} ms`);
        assert.equal(client.state, 'closed');
        assert.notEqual(await observer.exists(node), null, 'nobody could end the session');
      } finally {
        await proxy.close();
      }
    });
  }
});
