import { after, before } from 'node:test';
import { ZooKeeperClient } from '../../src/index.js';
import { ZooKeeperServer } from '../../src/testing/index.js';

export interface ServerFixture {
  server: ZooKeeperServer;
  /** A client of the test's own, for setting up and checking what the code under test did. */
  client: ZooKeeperClient;
}

/**
 * One ZooKeeper server and a client of it for the tests of a `describe`: started in its `before`,
 * stopped in its `after`. Read the fields inside tests and hooks (they are set once it started).
 */
export function serverFixture(): ServerFixture {
  const fixture = {} as ServerFixture;
  before(async () => {
    fixture.server = await ZooKeeperServer.start();
    fixture.client = await ZooKeeperClient.connect(fixture.server.connectString);
  });
  after(async () => {
    await fixture.client?.close();
    await fixture.server?.stop();
  });
  return fixture;
}
