import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ZooKeeperClient } from '../../src/index.js';
import { FaultProxy } from '../../src/testing/index.js';
import { ROUND_TRIPS_MS } from '../support/bounds.js';
import { stall } from '../support/wait.js';
import { RecipeFixture, within } from '../recipes/fixtures.js';

/**
 * The read deadline (two thirds of the session timeout without receiving) was judged in the
 * timers phase, before the poll phase reads what arrived meanwhile: after an event-loop stall
 * longer than the deadline, a connection whose reply was waiting in the socket was dropped, the
 * request failed with CONNECTIONLOSS, and the session went suspended, then reconnected.
 */
describe('an event-loop stall', () => {
  let zk: RecipeFixture;
  let client: ZooKeeperClient;
  before(async () => {
    zk = await RecipeFixture.start();
    client = await zk.client({ sessionTimeout: 3000 });
  });
  after(async () => {
    await zk?.close();
  });

  it('longer than the read deadline, with the reply waiting in the socket, keeps the connection and answers the request', async () => {
    assert.equal(client.sessionTimeout, 3000);
    await client.create('/stall', 'data');
    const lost: string[] = [];
    client.on('suspended', () => lost.push('suspended'));
    client.on('connectionError', (error) => lost.push(`connectionError: ${error.message}`));
    const reply = client.getData('/stall');
    // Written by now (the request goes out in a microtask); its reply arrives while the loop is stalled.
    await new Promise((resolve) => setImmediate(resolve));
    stall(2400);
    const { data } = await within(reply, ROUND_TRIPS_MS, 'the reply');
    assert.equal(data.toString(), 'data');
    // Another round trip: the read deadline has been judged (and a ping sent) by then.
    await client.getData('/stall');
    assert.deepEqual(lost, [], 'the connection stayed up');
    assert.equal(client.state, 'connected');
  });

  it('longer than the handshake deadline, with the handshake answer waiting in the socket, establishes the session on that connection', async () => {
    await using proxy = await FaultProxy.start({ targetPort: zk.server.port });
    let stalled = false;
    // The proxy runs in this process: the stall starts once it has handed the server's answer to the client's socket.
    proxy.onChunk((event) => {
      if (event.direction !== 'downstream' || stalled) return;
      stalled = true;
      stall(1500); // over the handshake deadline: a third of the 3 s session
    });
    const failures: string[] = [];
    const late = new ZooKeeperClient(proxy.connectString, { sessionTimeout: 3000 });
    late.on('connectionError', (error) => failures.push(error.message));
    try {
      await late.waitForConnected({ timeout: ROUND_TRIPS_MS });
      assert.ok(stalled, 'the loop was stalled');
      assert.deepEqual(failures, [], 'the first connection was kept');
      assert.equal(proxy.stats().totalConnections, 1);
    } finally {
      await late.close();
    }
  });

  it("longer than a request's own timeout, with its reply waiting in the socket, answers the request rather than failing it with TIMEOUT", async () => {
    await client.create('/stall-timeout', 'data');
    const reply = client.getData('/stall-timeout', { timeout: 1000 });
    await new Promise((resolve) => setImmediate(resolve));
    stall(1500);
    const { data } = await within(reply, ROUND_TRIPS_MS, 'the reply');
    assert.equal(data.toString(), 'data');
  });

  /**
   * A stall that spans the moment the ping was due leaves nothing in the socket afterwards: the
   * ping never went out, so the server had no reason to speak. The read deadline used to declare
   * such a connection silent (explore: healthy-connection-dropped, stalls of 853 ms with a 2 s
   * session); silence is now judged from the first thing sent since the last receipt, which after
   * a stall is the ping sent then.
   */
  it('longer than the read deadline, with no request out, keeps the connection', async () => {
    assert.equal(client.sessionTimeout, 3000);
    await client.create('/quiet', 'data');
    const lost: string[] = [];
    client.on('suspended', () => lost.push('suspended'));
    client.on('connectionError', (error) => lost.push(`connectionError: ${error.message}`));
    // The last byte was just received; the ping is due in 1000 ms, the read deadline in 2000 ms:
    // the stall covers both, so nothing the server was asked is waiting when the loop resumes.
    stall(2200);
    // Two round trips: the first one is asked while the deadline is judged, the second after it.
    await within(client.getData('/quiet'), ROUND_TRIPS_MS, 'a read after the stall');
    await within(client.getData('/quiet'), ROUND_TRIPS_MS, 'a second read');
    assert.deepEqual(lost, [], 'the connection stayed up');
    assert.equal(client.state, 'connected');
  });
});
