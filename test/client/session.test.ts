import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { WatchEvent } from '../../src/index.js';
import { CREATOR_ALL_ACL, ZooKeeperClient, ZooKeeperError, isZooKeeperError } from '../../src/index.js';
import { Writer } from '../../src/protocol/index.js';
import { FaultProxy, ZooKeeperServer } from '../../src/testing/index.js';
import { ROUND_TRIPS_MS, sessionBound } from '../support/bounds.js';
import { deferred, eventually, nextEvent } from '../support/wait.js';

/** Sessions of 2 s on a 200 ms tick: fault tests run in seconds. */
const SESSION_MS = 2000;

describe('sessions under faults', () => {
  let server: ZooKeeperServer;
  let admin: ZooKeeperClient;

  before(async () => {
    server = await ZooKeeperServer.start({ tickTime: 200, minSessionTimeout: 400, maxSessionTimeout: 20_000 });
    admin = await ZooKeeperClient.connect(server.connectString);
  });
  after(async () => {
    await admin?.close();
    await server?.close();
  });

  async function viaProxy(options: ConstructorParameters<typeof ZooKeeperClient>[1] = {}): Promise<{ proxy: FaultProxy; client: ZooKeeperClient }> {
    const proxy = await FaultProxy.start({ targetPort: server.port });
    const client = await ZooKeeperClient.connect(proxy.connectString, { sessionTimeout: SESSION_MS, ...options });
    return { proxy, client };
  }

  it('close() ends the session on the server and leaves no timer or socket behind', async () => {
    const before = process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap');
    const client = await ZooKeeperClient.connect(server.connectString, { sessionTimeout: SESSION_MS });
    await client.create('/s-closing', '', { mode: 'EPHEMERAL' });
    await client.getData('/s-closing', { watch: () => undefined });
    await client.close();
    await new Promise((r) => setImmediate(r));
    const afterClose = process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap');
    assert.deepEqual(afterClose.sort(), before.sort());
    assert.equal(await admin.exists('/s-closing'), null, 'the ephemeral node went with the session');
  });

  it('negotiates the session timeout and reports states as events and as a property', async () => {
    const client = new ZooKeeperClient(server.connectString, { sessionTimeout: SESSION_MS });
    assert.equal(client.state, 'connecting');
    const [event] = await nextEvent(client, 'state');
    assert.equal(event, 'connected');
    assert.equal(client.state, 'connected');
    assert.equal(client.sessionTimeout, SESSION_MS);
    assert.notEqual(client.sessionId, 0n);
    assert.equal(client.server, `127.0.0.1:${server.port}`);
    const closed = nextEvent(client, 'closed');
    await client.close();
    await closed;
    assert.equal(client.state, 'closed');
    await assert.rejects(client.getData('/'), { code: 'CLOSED' });
  });

  it('hands the state changes to onState listeners and to states(), which ends after closed', async () => {
    // A session long enough that the reconnect resumes it, even on a loaded machine.
    const { proxy, client } = await viaProxy({ sessionTimeout: 10_000 });
    const heard: string[] = [];
    client.onState((event) => heard.push(event));
    const unsubscribe = client.onState(() => assert.fail('an unsubscribed listener was called'));
    unsubscribe();
    const iterated = (async () => {
      const changes: string[] = [];
      for await (const { event, reason } of client.states()) changes.push(reason ? `${event} (${reason.code})` : event);
      return changes;
    })();
    try {
      const reconnected = nextEvent(client, 'reconnected', sessionBound(client.sessionTimeout));
      proxy.resetAll();
      await reconnected;
    } finally {
      await client.close();
      await proxy.close();
    }
    assert.deepEqual(await iterated, ['suspended (CONNECTIONLOSS)', 'reconnected', 'closed']);
    assert.deepEqual(heard, ['suspended', 'reconnected', 'closed']);
    assert.equal(client.listenerCount('state'), 0, 'neither uses the state event');
    for await (const change of client.states()) assert.fail(`a closed client has no state change to come: ${change.event}`);
  });

  it('waitForConnected({ session }) also resolves once that session is over, with no connection to be had', async () => {
    const { proxy, client } = await viaProxy();
    try {
      const id = client.sessionId;
      const suspended = nextEvent(client, 'suspended');
      const expired = nextEvent(client, 'expired', sessionBound(client.sessionTimeout));
      proxy.refuseNew(true);
      proxy.resetAll();
      await suspended;
      const over = client.waitForConnected({ session: id, timeout: Infinity });
      const connected = client.waitForConnected({ timeout: sessionBound(client.sessionTimeout) + ROUND_TRIPS_MS });
      await expired;
      // onState listeners hear a change before the events do: settled already, or never.
      const settled = (p: Promise<void>): Promise<string> => Promise.race([p.then(() => 'resolved'), new Promise<string>((resolve) => setImmediate(() => resolve('pending')))]);
      assert.equal(await settled(over), 'resolved');
      assert.equal(await settled(connected), 'pending', 'a plain wait goes on for a new session');
      assert.equal(client.state, 'expired');
      assert.notEqual(client.sessionId, id);
      proxy.passThrough();
      await connected;
    } finally {
      await client.close();
      await proxy.close();
    }
  });

  it('detects a half-open connection by its read timeout and resumes the same session', async (t) => {
    // Detected by the read timeout (2/3 of the session timeout), the connection must be replaced
    // before the server expires the session: 6 s leave 2 s for that on a busy machine.
    const { proxy, client } = await viaProxy({ sessionTimeout: 6000 });
    try {
      const id = client.sessionId;
      const started = performance.now();
      const suspended = nextEvent(client, 'suspended', sessionBound(client.sessionTimeout));
      proxy.blackhole('both');
      await suspended;
      t.diagnostic(`suspended ${(performance.now() - started).toFixed(0)} ms after the connection went silent (read timeout ${((client.sessionTimeout * 2) / 3).toFixed(0)} ms)`);
      const reconnected = nextEvent(client, 'reconnected', sessionBound(client.sessionTimeout));
      proxy.passThrough();
      await reconnected;
      assert.equal(client.sessionId, id);
    } finally {
      await client.close();
      await proxy.close();
    }
  });

  it('fails requests in flight with CONNECTIONLOSS when the connection drops', async () => {
    const { proxy, client } = await viaProxy();
    try {
      proxy.blackhole('downstream');
      const inFlight = client.getData('/');
      await eventually(() => proxy.stats().upstreamBytes > 0, ROUND_TRIPS_MS, 'request forwarded');
      proxy.resetAll();
      await assert.rejects(inFlight, (e: ZooKeeperError) => e.code === 'CONNECTIONLOSS' && e.op === 'getData');
      proxy.passThrough();
      await client.waitForConnected({ timeout: ROUND_TRIPS_MS });
      assert.ok(await client.exists('/'));
    } finally {
      await client.close();
      await proxy.close();
    }
  });

  it('a connection cut right after every handshake: reconnects back off instead of spinning, and the first that lasts ends it', async () => {
    const { proxy, client } = await viaProxy({ sessionTimeout: 20_000 });
    let cutting = true;
    // Established, then cut at once: a server or balancer that accepts and drops every connection.
    const unsubscribe = client.onState((event) => {
      if (cutting && (event === 'connected' || event === 'reconnected')) proxy.resetAll();
    });
    try {
      const before = proxy.stats().totalConnections;
      const cpu = process.cpuUsage();
      proxy.resetAll();
      // An interval to count over, not a wait for something: without a back-off this made about 2,300 connections.
      await new Promise((resolve) => setTimeout(resolve, 2000));
      const made = proxy.stats().totalConnections - before;
      const used = process.cpuUsage(cpu);
      assert.ok(made >= 2 && made <= 20, `${made} connections in 2 s`);
      assert.ok((used.user + used.system) / 1000 < 1000, `${(used.user + used.system) / 1000} ms of CPU in 2 s`);
      cutting = false;
      await client.waitForConnected({ timeout: ROUND_TRIPS_MS });
      assert.ok(await client.exists('/'));
    } finally {
      unsubscribe();
      await client.close();
      await proxy.close();
    }
  });

  it('queues requests while suspended until the reconnect, bounded by timeout and abort', async () => {
    const { proxy, client } = await viaProxy({ requestTimeout: ROUND_TRIPS_MS, sessionTimeout: 6000 });
    try {
      await client.create('/s-queued', 'v');
      const suspended = nextEvent(client, 'suspended');
      proxy.refuseNew(true);
      proxy.resetAll();
      await suspended;
      const queued = client.getData('/s-queued');
      await assert.rejects(client.getData('/s-queued', { timeout: 100 }), { code: 'TIMEOUT', path: '/s-queued' });
      const controller = new AbortController();
      const aborted = client.getData('/s-queued', { signal: controller.signal });
      controller.abort(new Error('caller gave up'));
      await assert.rejects(aborted, { code: 'ABORTED' });
      proxy.refuseNew(false);
      assert.equal((await queued).data.toString(), 'v');
    } finally {
      await client.close();
      await proxy.close();
    }
  });

  it('bounds a queued request by the default request timeout', async () => {
    const { proxy, client } = await viaProxy({ requestTimeout: 300 });
    try {
      const suspended = nextEvent(client, 'suspended');
      proxy.blackhole('both');
      await suspended;
      await assert.rejects(client.exists('/'), { code: 'TIMEOUT' });
    } finally {
      await client.close();
      await proxy.close();
    }
  });

  it('re-sends auth and re-registers watches after a reconnect; a change made while disconnected still fires', async () => {
    const { proxy, client } = await viaProxy({ auth: [{ scheme: 'digest', auth: 'dora:pw' }], sessionTimeout: 6000 });
    try {
      await client.create('/s-auth', 'mine', { acl: CREATOR_ALL_ACL });
      await client.create('/s-watch', 'before');
      const changed = deferred<WatchEvent>();
      const childEvent = deferred<WatchEvent>();
      await client.getData('/s-watch', { watch: changed.resolve });
      await client.getChildren('/s-watch', { watch: childEvent.resolve });
      const suspended = nextEvent(client, 'suspended');
      proxy.refuseNew(true);
      proxy.resetAll();
      await suspended;
      await admin.setData('/s-watch', 'during the outage');
      await admin.create('/s-watch/kid');
      const reconnected = nextEvent(client, 'reconnected');
      proxy.refuseNew(false);
      await reconnected;
      assert.deepEqual(await changed.promise, { type: 'dataChanged', path: '/s-watch' });
      assert.deepEqual(await childEvent.promise, { type: 'childrenChanged', path: '/s-watch' });
      assert.equal((await client.getData('/s-auth')).data.toString(), 'mine');
    } finally {
      await client.close();
      await proxy.close();
    }
  });

  it('reports expiry after a partition longer than the session, then starts a new session', async () => {
    const { proxy, client } = await viaProxy();
    try {
      const oldId = client.sessionId;
      await client.create('/s-eph', '', { mode: 'EPHEMERAL' });
      const watchEnded = deferred<WatchEvent>();
      await client.getData('/s-eph', { watch: watchEnded.resolve });
      const expired = nextEvent(client, 'expired', sessionBound(client.sessionTimeout));
      proxy.blackhole('both');
      const [reason] = await expired;
      assert.ok(reason instanceof ZooKeeperError && reason.code === 'SESSIONEXPIRED');
      assert.deepEqual(await watchEnded.promise, { type: 'expired', path: '/s-eph' });
      await eventually(async () => (await admin.exists('/s-eph')) === null, sessionBound(SESSION_MS), 'server expired the session');
      const connected = nextEvent(client, 'connected');
      proxy.passThrough();
      await connected;
      assert.notEqual(client.sessionId, oldId);
      assert.equal(client.state, 'connected');
    } finally {
      await client.close();
      await proxy.close();
    }
  });

  it('reports expiry when the server says so on reconnect', async () => {
    const { proxy, client } = await viaProxy({ sessionTimeout: 6000 });
    try {
      await client.create('/s-eph2', '', { mode: 'EPHEMERAL' });
      const suspended = nextEvent(client, 'suspended', sessionBound(client.sessionTimeout));
      proxy.blackhole('both');
      await suspended;
      const queued = client.getData('/s-eph2', { timeout: 2 * sessionBound(client.sessionTimeout) }).catch((e: unknown) => e);
      // The server expires the session about one timeout after it last heard from us; the client
      // would only conclude it by itself later, so the expiry seen here is the server's.
      await eventually(async () => (await admin.exists('/s-eph2')) === null, sessionBound(client.sessionTimeout), 'server expired the session');
      const expired = nextEvent(client, 'expired');
      proxy.passThrough();
      const [reason] = await expired;
      assert.match((reason as Error).message, /reports the session expired/);
      const failure = await queued;
      assert.ok(failure instanceof ZooKeeperError && failure.code === 'SESSIONEXPIRED', String(failure));
      await client.waitForConnected({ timeout: ROUND_TRIPS_MS });
    } finally {
      await client.close();
      await proxy.close();
    }
  });

  it('without renewal, an expired client stays expired and fails requests at once', async () => {
    const { proxy, client } = await viaProxy({ renewExpiredSession: false });
    try {
      const expired = nextEvent(client, 'expired', sessionBound(client.sessionTimeout));
      proxy.blackhole('both');
      await expired;
      proxy.passThrough();
      await assert.rejects(client.getData('/'), { code: 'SESSIONEXPIRED' });
      assert.equal(client.state, 'expired');
    } finally {
      await client.close();
      await proxy.close();
    }
  });

  it('drops a connection whose server sends malformed bytes, reports why, and connects again', async () => {
    // The first connection gets a valid handshake then a frame that claims 2 GiB; later ones are piped to the real server.
    let connections = 0;
    const liar = net.createServer((socket) => {
      if (connections++ > 0) {
        const upstream = net.connect(server.port, '127.0.0.1');
        socket.pipe(upstream).pipe(socket);
        socket.on('error', () => upstream.destroy());
        upstream.on('error', () => socket.destroy());
        return;
      }
      socket.once('data', () => {
        const w = new Writer();
        w.int(0).int(4000).long(1n).buffer(Buffer.alloc(16)).bool(false);
        socket.write(w.frame());
        socket.write(Buffer.from([0x7f, 0xff, 0xff, 0xff, 1, 2, 3]));
      });
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => liar.listen(0, '127.0.0.1', resolve));
    const client = new ZooKeeperClient(`127.0.0.1:${(liar.address() as net.AddressInfo).port}`, { sessionTimeout: SESSION_MS });
    const errors: Error[] = [];
    client.on('connectionError', (e) => errors.push(e));
    try {
      await eventually(() => errors.some((e) => isZooKeeperError(e, 'PROTOCOL_ERROR')), ROUND_TRIPS_MS, 'protocol error reported');
      await eventually(() => connections > 1 && client.state === 'connected', ROUND_TRIPS_MS, 'connected again');
      await client.create('/s-after-garbage', '', { mode: 'EPHEMERAL' });
      assert.ok(await admin.exists('/s-after-garbage'));
    } finally {
      await client.close();
      liar.close();
    }
  });

});
