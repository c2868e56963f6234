import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RequestMessage, SessionMessage, WatchMessage } from '../../src/index.js';
import { Mutex, ZooKeeperClient, acquireChannel, lostChannel, releaseChannel, requestChannel, revocationChannel, sessionChannel, watchChannel } from '../../src/index.js';
import { RecipeFixture } from '../recipes/fixtures.js';
import { channelLog } from '../support/channel-log.js';
import { sessionBound } from '../support/bounds.js';
import { eventually, nextEvent } from '../support/wait.js';

const hex = (id: bigint): string => `0x${id.toString(16)}`;

describe('the client diagnostics channels (zklock:client:*)', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  it('zklock:client:request traces each request: op, path, session, xid, duration; the error code on failure', async () => {
    const client = await zk.client();
    const session = hex(client.sessionId);
    const log = channelLog<RequestMessage>(requestChannel, (m) => m.sessionId === session && m.path?.startsWith('/diag-req') === true);
    try {
      await client.create('/diag-req', 'x');
      await assert.rejects(client.getData('/diag-req/missing'), { code: 'NONODE' });
    } finally {
      log.stop();
    }
    assert.deepEqual(
      log.seen.map(({ event, message }) => `${event} ${message.op} ${message.path}`),
      ['start create /diag-req', 'end create /diag-req', 'asyncStart create /diag-req', 'asyncEnd create /diag-req', 'start getData /diag-req/missing', 'end getData /diag-req/missing', 'error getData /diag-req/missing', 'asyncStart getData /diag-req/missing', 'asyncEnd getData /diag-req/missing'],
    );
    const created = log.seen.find((s) => s.event === 'asyncEnd' && s.message.op === 'create')!.message;
    const failed = log.seen.find((s) => s.event === 'error')!.message;
    // Both answered by the server: each has its xid, the later one the higher.
    assert.ok(Number.isInteger(created.xid) && Number.isInteger(failed.xid) && failed.xid! > created.xid!, `xids ${created.xid} ${failed.xid}`);
    assert.ok(created.duration! >= 0 && failed.duration! >= 0);
    assert.equal(created.errorCode, undefined);
    assert.equal(failed.errorCode, 'NONODE');
    assert.equal((failed.error as { code: string }).code, 'NONODE');
    // Every field but result and error is JSON-safe (a result may hold bigints: a getData's stat).
    const { error, result, ...fields } = failed;
    assert.equal(result, undefined);
    assert.ok(error instanceof Error);
    assert.doesNotThrow(() => JSON.stringify(fields));
  });

  it('zklock:client:session tells connect and close with the session id; zklock:client:watch each notification, before its watcher', async () => {
    const log = channelLog<SessionMessage>(sessionChannel);
    const client = await ZooKeeperClient.connect(zk.server.connectString);
    const session = hex(client.sessionId);
    const watches = channelLog<WatchMessage>(watchChannel, (m) => m.sessionId === session);
    let seenFirst = false;
    await client.exists('/diag-watch', { watch: () => (seenFirst = watches.seen.length === 1) });
    await zk.admin.create('/diag-watch');
    await eventually(() => watches.seen.length === 1, undefined, 'the watch event');
    watches.stop();
    assert.deepEqual(watches.seen[0]!.message, { type: 'created', path: '/diag-watch', sessionId: session });
    assert.ok(seenFirst, 'published before the watcher ran');
    await client.close();
    log.stop();
    const ours = log.seen.map((s) => s.message).filter((m) => m.event === 'closed' || m.sessionId === session);
    assert.deepEqual(ours.map((m) => m.event), ['connected', 'closed']);
    assert.equal(ours[0]!.server, `127.0.0.1:${zk.server.port}`);
  });

  it('zklock:client:session names the session that ended with expired, not the id the client has after it', async () => {
    const { client, proxy } = await zk.viaProxy({ sessionTimeout: 1200 });
    const ended = hex(client.sessionId);
    const log = channelLog<SessionMessage>(sessionChannel, (m) => m.event === 'expired');
    const expired = nextEvent(client, 'expired', sessionBound(client.sessionTimeout));
    proxy.blackhole('both');
    await expired;
    log.stop();
    proxy.passThrough();
    assert.equal(log.seen.length, 1);
    assert.equal(log.seen[0]!.message.sessionId, ended);
    assert.notEqual(ended, '0x0');
  });

  it('with no subscriber nothing is published or traced: no message is built on any channel', async () => {
    // Each channel's way in, replaced by a spy: the code builds a message only right before it.
    const calls: string[] = [];
    const restore: (() => void)[] = [];
    const spy = (target: object, method: string, name: string): void => {
      const original = (target as Record<string, unknown>)[method];
      Object.assign(target, { [method]: () => void calls.push(name) });
      restore.push(() => Object.assign(target, { [method]: original }));
    };
    spy(requestChannel, 'tracePromise', 'request');
    spy(acquireChannel, 'tracePromise', 'acquire');
    spy(releaseChannel, 'tracePromise', 'release');
    for (const [name, channel] of Object.entries({ session: sessionChannel, watch: watchChannel, lost: lostChannel, revocation: revocationChannel })) spy(channel, 'publish', name);
    try {
      assert.equal(requestChannel.start.hasSubscribers || sessionChannel.hasSubscribers || watchChannel.hasSubscribers, false);
      const client = await ZooKeeperClient.connect(zk.server.connectString, { sessionTimeout: 10_000 });
      const lease = await new Mutex(client, '/diag-none', { revocable: true }).acquire();
      const waiter = new Mutex(zk.admin, '/diag-none').acquire();
      await eventually(async () => (await zk.children('/diag-none')).length === 2, undefined, 'the waiter queued');
      await zk.admin.setData(lease.node, '__REVOKE__');
      await eventually(() => lease.revocationRequested.aborted, undefined, 'the request heard');
      await lease.release();
      const next = await waiter;
      await client.delete(next.node);
      await eventually(() => !next.held, undefined, 'the loss heard');
      await client.close();
    } finally {
      for (const undo of restore) undo();
    }
    assert.deepEqual(calls, []);
  });
});
