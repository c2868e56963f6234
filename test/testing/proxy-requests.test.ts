import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ZooKeeperClient, isZooKeeperError } from '../../src/index.js';
import { FaultProxy } from '../../src/testing/index.js';
import type { RequestVerdict } from '../../src/testing/index.js';
import { ROUND_TRIPS_MS } from '../support/bounds.js';
import { serverFixture } from '../support/server-fixture.js';
import { eventually } from '../support/wait.js';

const ADD_WATCH = 106;
/** create2: what the client sends for a create (the reply carries the Stat). */
const CREATE2 = 15;
const UNIMPLEMENTED = -6;

describe('FaultProxy onRequest, against a real server', { timeout: 6 * ROUND_TRIPS_MS }, () => {
  const zk = serverFixture();
  const closing: { close(): Promise<void> }[] = [];
  after(async () => {
    for (const c of closing.reverse()) await c.close();
  });

  async function through(decide: (opcode: number) => RequestVerdict): Promise<{ proxy: FaultProxy; client: ZooKeeperClient }> {
    const proxy = await FaultProxy.start({ targetPort: zk.server.port, onRequest: ({ opcode }) => decide(opcode) });
    closing.push(proxy);
    const client = await ZooKeeperClient.connect(proxy.connectString, { sessionTimeout: 4000 });
    closing.push(client);
    return { proxy, client };
  }

  it('answers an operation with an error and closes, as a 3.5 server does with addWatch; the session and other requests go on', async () => {
    const { proxy, client } = await through((opcode) => (opcode === ADD_WATCH ? { error: UNIMPLEMENTED, close: true } : 'forward'));
    const session = client.sessionId;
    await client.create('/proxy-requests-before', 'x');
    await assert.rejects(client.addWatch('/', { recursive: true }), (error: unknown) => isZooKeeperError(error, 'UNIMPLEMENTED'));
    // The connection closed after the answer: the client is on a second one, same session.
    await eventually(() => proxy.stats().totalConnections >= 2, ROUND_TRIPS_MS, 'a second connection');
    await client.waitForConnected({ timeout: ROUND_TRIPS_MS });
    assert.equal(client.sessionId, session);
    assert.equal((await client.getData('/proxy-requests-before')).data.toString(), 'x');
    // The server never got the watch: its own list has none for this session.
    assert.doesNotMatch(await zk.server.fourLetterWord('wchc'), new RegExp(`^0x${session.toString(16)}$`, 'm'));
  });

  it('resets the connection with the request in flight: the server never sees it', async () => {
    let refuse = true;
    const { proxy, client } = await through((opcode) => (opcode === CREATE2 && refuse ? 'reset' : 'forward'));
    await assert.rejects(client.create('/proxy-requests-reset', ''), (error: unknown) => isZooKeeperError(error, 'CONNECTIONLOSS'));
    refuse = false;
    await client.waitForConnected({ timeout: ROUND_TRIPS_MS });
    assert.equal(await zk.client.exists('/proxy-requests-reset'), null, 'the create never reached the server');
    await client.create('/proxy-requests-reset', '');
    assert.ok(await zk.client.exists('/proxy-requests-reset'));
    assert.ok(proxy.stats().totalConnections >= 2);
  });
});
