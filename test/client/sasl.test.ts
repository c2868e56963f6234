import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ACL } from '../../src/index.js';
import { Perms, ZooKeeperClient, ZooKeeperError, digestAcl } from '../../src/index.js';
import { FaultProxy, ZooKeeperEnsemble, ZooKeeperServer } from '../../src/testing/index.js';
import { sessionBound } from '../support/bounds.js';
import { recordEvents } from '../support/events.js';
import { nextEvent, retryOnConnectionLoss } from '../support/wait.js';

/** The identity a DIGEST-MD5 login gets on a 3.8 server is `sasl:<user name>`. */
const BOB_ONLY: ACL[] = [{ perms: Perms.ALL, id: { scheme: 'sasl', id: 'bob' } }];
const BOB = { mechanism: 'DIGEST-MD5', username: 'bob', password: 'bob-secret' } as const;
const USERS = { bob: BOB.password, alice: 'alice-secret' };

function hasCode(code: string, zkCode: number): (error: unknown) => boolean {
  return (error) => error instanceof ZooKeeperError && error.code === code && error.zkCode === zkCode;
}

describe('SASL DIGEST-MD5', () => {
  let server: ZooKeeperServer;
  /** Connected without SASL: no identity but world:anyone. */
  let anonymous: ZooKeeperClient;

  before(async () => {
    server = await ZooKeeperServer.start({ sasl: { users: USERS } });
    anonymous = await ZooKeeperClient.connect(server.connectString);
  });
  after(async () => {
    await anonymous?.close();
    await server?.close();
  });

  it('right credentials: connected as sasl:bob; a node only sasl:bob may touch is bob\'s alone', async () => {
    const bob = await ZooKeeperClient.connect(server.connectString, { sasl: BOB });
    const alice = await ZooKeeperClient.connect(server.connectString, { sasl: { mechanism: 'DIGEST-MD5', username: 'alice', password: USERS.alice } });
    try {
      await bob.create('/sasl-bob', 'mine', { acl: BOB_ONLY });
      assert.equal((await bob.getData('/sasl-bob')).data.toString(), 'mine');
      // The server stored the ACL as given (the sasl scheme is registered), and enforces it.
      assert.deepEqual((await bob.getACL('/sasl-bob')).acl, BOB_ONLY);
      await assert.rejects(anonymous.getData('/sasl-bob'), hasCode('NOAUTH', -102));
      await assert.rejects(anonymous.getACL('/sasl-bob'), hasCode('NOAUTH', -102));
      await assert.rejects(alice.getData('/sasl-bob'), hasCode('NOAUTH', -102));
      await assert.rejects(anonymous.setData('/sasl-bob', 'theirs'), hasCode('NOAUTH', -102));
      await bob.setData('/sasl-bob', 'still mine');
      assert.equal((await bob.getData('/sasl-bob')).data.toString(), 'still mine');
    } finally {
      await alice.close();
      await bob.close();
    }
  });

  it('a wrong password: connect() rejects with AUTHFAILED, the client closed, never reported connected', async () => {
    const wrong = { ...BOB, password: 'not-bobs' };
    await assert.rejects(ZooKeeperClient.connect(server.connectString, { sasl: wrong }), hasCode('AUTHFAILED', -115));
    const client = new ZooKeeperClient(server.connectString, { sasl: wrong });
    const events = recordEvents(client);
    await assert.rejects(client.waitForConnected(), hasCode('AUTHFAILED', -115));
    assert.deepEqual(events, ['authFailed:AUTHFAILED', 'state closed:AUTHFAILED']);
    assert.equal(client.terminated, true);
    await assert.rejects(client.getData('/'), (error) => hasCode('AUTHFAILED', -115)(error) && (error as ZooKeeperError).op === 'getData');
    await client.close();
    // An unknown user is refused the same way. (Not with the password of the user who logged in
    // last: 3.8.0's SaslServerCallbackHandler keeps that user's name across connections, and
    // looks up the password by it when the name given is unknown.)
    await assert.rejects(ZooKeeperClient.connect(server.connectString, { sasl: { ...BOB, username: 'mallory', password: 'mallory-secret' } }), hasCode('AUTHFAILED', -115));
  });

  it('credentials are authenticated again on every connection: the session resumed through a reset still reads its sasl-only node', async () => {
    const proxy = await FaultProxy.start({ targetPort: server.port });
    const bob = await ZooKeeperClient.connect(proxy.connectString, { sasl: BOB, sessionTimeout: 6000 });
    try {
      await bob.create('/sasl-reconnect', 'r', { acl: BOB_ONLY, mode: 'EPHEMERAL' });
      const session = bob.sessionId;
      for (let round = 0; round < 2; round++) {
        const reconnected = nextEvent(bob, 'reconnected', sessionBound(6000));
        assert.ok(proxy.resetAll() > 0);
        await reconnected;
        assert.equal(bob.sessionId, session, 'the same session, resumed');
        // The server keeps identities per connection: this read needs SASL on the new one.
        assert.equal((await bob.getData('/sasl-reconnect')).data.toString(), 'r');
      }
      assert.ok(proxy.stats().totalConnections >= 3, `${proxy.stats().totalConnections} connections`);
    } finally {
      await bob.close();
      await proxy.close();
    }
  });

  it('rejects options it cannot use with INVALID_ARGUMENT', () => {
    const bad = [{ ...BOB, mechanism: 'GSSAPI' }, { ...BOB, username: '' }, { ...BOB, password: undefined }];
    for (const sasl of bad) {
      assert.throws(() => new ZooKeeperClient(server.connectString, { sasl: sasl as never }), (error) => error instanceof ZooKeeperError && error.code === 'INVALID_ARGUMENT');
    }
  });
});

describe('a server that requires SASL (sessionRequireClientSASLAuth)', () => {
  let server: ZooKeeperServer;

  before(async () => {
    server = await ZooKeeperServer.start({ sasl: { users: USERS, requireClientAuth: true } });
  });
  after(async () => {
    await server?.close();
  });

  it('a client without SASL ends with SESSIONCLOSEDREQUIRESASLAUTH, its request failed with it', async () => {
    const client = new ZooKeeperClient(server.connectString);
    const events = recordEvents(client);
    // The handshake succeeds; the server refuses the first request (or ping) and closes the connection.
    await assert.rejects(client.exists('/'), hasCode('SESSIONCLOSEDREQUIRESASLAUTH', -124));
    assert.equal(client.terminated, true);
    assert.deepEqual(
      events.filter((e) => !e.startsWith('state connected')),
      ['authFailed:SESSIONCLOSEDREQUIRESASLAUTH', 'state closed:SESSIONCLOSEDREQUIRESASLAUTH'],
    );
    await client.close();
  });

  it('a client with SASL works; one with a wrong password is refused', async () => {
    const bob = await ZooKeeperClient.connect(server.connectString, { sasl: BOB });
    try {
      await bob.create('/required', 'ok');
      assert.equal((await bob.getData('/required')).data.toString(), 'ok');
    } finally {
      await bob.close();
    }
    await assert.rejects(ZooKeeperClient.connect(server.connectString, { sasl: { ...BOB, password: 'x' } }), hasCode('SESSIONCLOSEDREQUIRESASLAUTH', -124));
  });

  it('after a reconnect, SASL goes before the digest auth and the watches it re-sends: all are accepted, the watch fires', async () => {
    const proxy = await FaultProxy.start({ targetPort: server.port });
    const bob = await ZooKeeperClient.connect(proxy.connectString, { sasl: BOB, auth: [{ scheme: 'digest', auth: 'bob:digest-pw' }], sessionTimeout: 6000 });
    const other = await ZooKeeperClient.connect(server.connectString, { sasl: { mechanism: 'DIGEST-MD5', username: 'alice', password: USERS.alice } });
    try {
      const both: ACL[] = [BOB_ONLY[0]!, digestAcl('bob', 'digest-pw', Perms.READ)];
      await bob.create('/required-watched', 'v0', { acl: [...both, { perms: Perms.WRITE, id: { scheme: 'sasl', id: 'alice' } }] });
      let fire!: () => void;
      const fired = new Promise<void>((resolve) => (fire = resolve));
      await bob.getData('/required-watched', { watch: () => fire() });
      const session = bob.sessionId;
      const events = recordEvents(bob);
      const reconnected = nextEvent(bob, 'reconnected', sessionBound(6000));
      proxy.resetAll();
      await reconnected;
      assert.equal(bob.sessionId, session);
      // Written by alice once bob's watch was re-registered on the new connection (setWatches is
      // answered before the getData below, in order).
      assert.equal((await bob.getData('/required-watched')).data.toString(), 'v0');
      await other.setData('/required-watched', 'v1');
      await fired;
      assert.ok(!events.some((e) => e.startsWith('authFailed')), events.join(', '));
    } finally {
      await other.close();
      await bob.close();
      await proxy.close();
    }
  });
});

describe('SASL across the members of an ensemble', () => {
  let ensemble: ZooKeeperEnsemble;

  before(async () => {
    ensemble = await ZooKeeperEnsemble.start({ size: 3, tickTime: 200, sasl: { users: USERS, requireClientAuth: true } });
  });
  after(async () => {
    await ensemble?.close();
  });

  it('the session moved to another member authenticates there: its sasl-only node is still readable', async () => {
    const bob = await ZooKeeperClient.connect(ensemble.connectString, { sasl: BOB, sessionTimeout: 6000 });
    try {
      await bob.create('/moved', 'm', { acl: BOB_ONLY });
      const session = bob.sessionId;
      const first = ensemble.members.find((m) => m.connectString === bob.server)!;
      const reconnected = nextEvent(bob, 'reconnected', sessionBound(6000));
      await first.stop();
      await reconnected;
      assert.notEqual(bob.server, first.connectString);
      assert.equal(bob.sessionId, session);
      // Stopping the leader makes the others drop their clients while they elect a new one.
      // sync: the member serving us has seen the create, whichever it is.
      const read = await retryOnConnectionLoss(bob, async () => {
        await bob.sync('/moved');
        return bob.getData('/moved');
      });
      assert.equal(read.data.toString(), 'm');
    } finally {
      await bob.close();
    }
  });
});
