import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ZooKeeperClient } from '../../src/index.js';
import { ZooKeeperServer } from '../../src/testing/index.js';
import { ROUND_TRIPS_MS, sessionBound } from '../support/bounds.js';
import { nextEvent } from '../support/wait.js';

const SERVER = { tickTime: 200, minSessionTimeout: 400 } as const;

describe('the session after an expiry', () => {
  it('starts afresh, as a new handle does: a server that has seen less than the old session (restarted with empty data) takes it', async () => {
    // A server refuses a handshake from a client that has seen a zxid newer than its own
    // ("Refusing session request ... has seen zxid"): right for a session resumed on a server
    // that is behind, never answerable for a new one, which Java (a new handle) and kazoo
    // (_reset) start from zxid 0. The client offered the expired session's zxid forever.
    const first = await ZooKeeperServer.start(SERVER);
    const port = first.port;
    const client = await ZooKeeperClient.connect(first.connectString, { sessionTimeout: 2000 });
    try {
      for (let i = 0; i < 5; i++) await client.create(`/seen-${i}`);
      assert.ok(client.lastZxid > 0n);
      const expired = nextEvent(client, 'expired', sessionBound(client.sessionTimeout));
      await first.close();
      await expired;
      await using second = await ZooKeeperServer.start({ ...SERVER, port });
      await client.waitForConnected({ timeout: ROUND_TRIPS_MS });
      await client.create('/written-after');
      const observer = await ZooKeeperClient.connect(second.connectString);
      try {
        assert.deepEqual((await observer.getChildren('/')).children.sort(), ['written-after', 'zookeeper']);
      } finally {
        await observer.close();
      }
    } finally {
      await client.close();
    }
  });
});
