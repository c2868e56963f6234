import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ZooKeeperClient, ZooKeeperError } from '../../src/index.js';
import { ZooKeeperServer } from '../../src/testing/index.js';
import { recordEvents } from '../support/events.js';
import { expectNothingLeft, openResources } from '../support/resources.js';

/**
 * The 3.8 server refuses an auth packet (AUTHFAILED, then closes the connection) for a scheme it
 * has no provider for, and for x509 on a connection without a client certificate; digest and ip
 * accept anything (a wrong digest password is just another identity).
 */
const REFUSED = { scheme: 'nosuch', auth: 'x' };

/** Long enough that an ephemeral node still there after close() can only mean the session was not ended. */
const SESSION_MS = 30_000;

function isAuthFailed(error: unknown): boolean {
  return error instanceof ZooKeeperError && error.code === 'AUTHFAILED' && error.zkCode === -115;
}

describe('credentials the server refuses', () => {
  let server: ZooKeeperServer;
  let admin: ZooKeeperClient;

  before(async () => {
    server = await ZooKeeperServer.start();
    admin = await ZooKeeperClient.connect(server.connectString);
  });
  after(async () => {
    await admin?.close();
    await server?.close();
  });

  it('connect() rejects with AUTHFAILED, without ever reporting the session connected', async () => {
    let events: string[] = [];
    const connecting = ZooKeeperClient.connect(server.connectString, { sessionTimeout: SESSION_MS, auth: [REFUSED] });
    await assert.rejects(connecting, (error) => isAuthFailed(error) && /scheme "nosuch"/.test((error as Error).message));
    // The same policy through the constructor, where the events can be watched from the start.
    const client = new ZooKeeperClient(server.connectString, { sessionTimeout: SESSION_MS, auth: [REFUSED] });
    events = recordEvents(client);
    await assert.rejects(client.waitForConnected(), isAuthFailed);
    assert.deepEqual(events, ['authFailed:AUTHFAILED', 'state closed:AUTHFAILED']);
    assert.equal(client.state, 'closed');
    assert.equal(client.terminated, true);
    await assert.rejects(client.getData('/'), (error) => isAuthFailed(error) && (error as ZooKeeperError).op === 'getData');
    await client.close();
  });

  it('a refused addAuth on a live client ends it: waiting requests fail with AUTHFAILED, no suspended, the session is ended on the server', async () => {
    const resourcesBefore = openResources();
    const client = await ZooKeeperClient.connect(server.connectString, { sessionTimeout: SESSION_MS });
    const events = recordEvents(client);
    await client.create('/auth-ephemeral', '', { mode: 'EPHEMERAL' });
    const refused = client.addAuth(REFUSED.scheme, REFUSED.auth);
    // Written behind the credentials: the server reads nothing after refusing them.
    const behind = client.create('/auth-never', '');
    await assert.rejects(refused, isAuthFailed);
    await assert.rejects(behind, (error) => isAuthFailed(error) && (error as ZooKeeperError).path === '/auth-never');
    await assert.rejects(client.exists('/'), isAuthFailed);
    await assert.rejects(client.addAuth('digest', 'u:p'), isAuthFailed);
    await assert.rejects(client.waitForConnected(), isAuthFailed);
    await client.close();
    assert.deepEqual(events, ['authFailed:AUTHFAILED', 'state closed:AUTHFAILED']);
    assert.equal(await admin.exists('/auth-never'), null, 'the request behind the refused credentials never ran');
    assert.equal(await admin.exists('/auth-ephemeral'), null, 'the session was ended on the server, its ephemeral node with it');
    await expectNothingLeft(resourcesBefore);
  });

  it('a refusal while close() is under way: closed once, with AUTHFAILED, and close() resolves once the session was ended', async () => {
    const client = await ZooKeeperClient.connect(server.connectString, { sessionTimeout: SESSION_MS });
    await client.create('/auth-closing', '', { mode: 'EPHEMERAL' });
    const closed: (string | undefined)[] = [];
    client.on('closed', (reason) => closed.push(reason?.code));
    const refused = assert.rejects(client.addAuth(REFUSED.scheme, REFUSED.auth), isAuthFailed);
    // The closeSession goes behind the credentials, which the server refuses: it never reads it.
    await client.close();
    await refused;
    assert.deepEqual(closed, ['AUTHFAILED']);
    assert.equal(await admin.exists('/auth-closing'), null, 'the session was ended before close() resolved');
  });
});
