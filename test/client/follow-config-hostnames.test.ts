import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ZooKeeperClient } from '../../src/index.js';
import { ZooKeeperEnsemble, ZooKeeperServer } from '../../src/testing/index.js';
import { ROUND_TRIPS_MS } from '../support/bounds.js';
import { eventually } from '../support/wait.js';

describe('followConfig with a connect string that names the members as the config does not (localhost vs 127.0.0.1)', () => {
  let ensemble: ZooKeeperEnsemble;
  before(async () => {
    ensemble = await ZooKeeperEnsemble.start({ size: 3, reconfigEnabled: true, tickTime: 200 });
  });
  after(async () => {
    await ensemble?.close();
  });

  it('a client on a listed member stays on it: reading the config that lists the same members drops no connection', async () => {
    const byName = ensemble.connectString.replaceAll('127.0.0.1', 'localhost');
    const client = await ZooKeeperClient.connect(byName, { sessionTimeout: 20_000, followConfig: true });
    const events: string[] = [];
    client.on('state', (event: string) => events.push(event));
    const errors: string[] = [];
    client.on('connectionError', (error: Error) => errors.push(error.message));
    try {
      const configRead = await client.getConfig();
      assert.match(configRead.data.toString(), /127\.0\.0\.1:\d+/, 'the config names the members by address');
      // The follower's read, and whatever it does after it, has happened once these are answered.
      await eventually(async () => {
        await client.sync('/');
        return client.state === 'connected';
      }, ROUND_TRIPS_MS, 'connected');
      for (let i = 0; i < 5; i++) await client.sync('/');
      assert.deepEqual(errors, [], 'no connection dropped');
      assert.deepEqual(events, [], 'no state change after the first connection');
    } finally {
      await client.close();
    }
  });

  it('updateServerAddresses naming the server the client is on by its address (127.0.0.1) where the connect string named it localhost: the client stays (zklock knows it is connected there; Java 3.4 resolved the new list and matched by address, 3.5+ compares host strings too)', async () => {
    const server = await ZooKeeperServer.start();
    const client = await ZooKeeperClient.connect(`localhost:${server.port}`, { sessionTimeout: 20_000 });
    const errors: string[] = [];
    client.on('connectionError', (error: Error) => errors.push(error.message));
    try {
      const inFlight = client.sync('/');
      client.updateServerAddresses(`127.0.0.1:${server.port}`);
      await inFlight;
      await client.sync('/');
      assert.deepEqual(errors, [], 'no connection dropped');
    } finally {
      await client.close();
      await server.close();
    }
  });
});
