import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ClientOptions, WatchEvent } from '../../src/index.js';
import { ZooKeeperClient } from '../../src/index.js';
import { ROUND_TRIPS_MS } from '../support/bounds.js';
import { deferred } from '../support/wait.js';
import { RecipeFixture, within } from '../recipes/fixtures.js';

function hasCode(code: string, ...mentions: string[]): (error: unknown) => boolean {
  return (error) => {
    assert.equal((error as { code?: string }).code, code, String(error));
    for (const text of mentions) assert.ok((error as Error).message.includes(text), `"${(error as Error).message}" mentions ${text}`);
    return true;
  };
}

describe('frame limits: what the client sends and what it reads', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  it("reads back, with the default limits, a node written up to the server's jute.maxbuffer", async () => {
    const client = await zk.client();
    const path = '/at-the-limit';
    // The largest setData the server reads: header 8, path 4 + length, data 4 + length, version 4.
    const largest = 0xfffff - (8 + 4 + path.length + 4 + 4);
    await client.create(path);
    await assert.rejects(client.setData(path, Buffer.alloc(largest + 1)), hasCode('DATA_TOO_LARGE'));
    await client.setData(path, Buffer.alloc(largest, 1));
    const { data } = await within(client.getData(path), ROUND_TRIPS_MS, 'reading the node back');
    assert.equal(data.length, largest);
  });

  it('refuses locally a request over maxRequestBytes, naming the option, and sends the others', async () => {
    const client = await zk.client({ maxRequestBytes: 4096 });
    await assert.rejects(client.create('/big-request', Buffer.alloc(4096)), hasCode('DATA_TOO_LARGE', 'maxRequestBytes', '/big-request'));
    await client.create('/small-request', Buffer.alloc(1024));
    assert.equal(await zk.admin.exists('/big-request'), null);
  });

  it('fails only the request whose reply is over maxReplyBytes, with REPLY_TOO_LARGE; the requests around it and the connection go on', async () => {
    const limit = 64 * 1024;
    const client = await zk.client({ maxReplyBytes: limit });
    const sessionId = client.sessionId;
    const events: string[] = [];
    client.on('state', (event: string) => events.push(event));
    client.on('connectionError', (reason: unknown) => events.push(`connectionError: ${String(reason)}`));

    // 1,000 children of 100-character names: a listing of about 104 KB, well over the limit.
    await zk.admin.create('/wide', 'small');
    const names = Array.from({ length: 1000 }, (_, i) => `${String(i).padStart(4, '0')}-${'x'.repeat(95)}`);
    for (let i = 0; i < names.length; i += 250) {
      await zk.admin.multi(names.slice(i, i + 250).map((name) => ({ op: 'create' as const, path: `/wide/${name}` })));
    }
    const lastCreate = (await zk.admin.exists('/wide'))!.pzxid;

    // Sent in one tick, so they are pipelined on the connection: before, the large one, after.
    const before = client.getData('/wide');
    const large = client.getChildren('/wide');
    const after = client.exists('/wide');
    await within(Promise.allSettled([before, large, after]), ROUND_TRIPS_MS, 'the pipelined requests');
    assert.equal((await before).data.toString(), 'small');
    assert.equal((await after)?.numChildren, names.length);
    await assert.rejects(large, { code: 'REPLY_TOO_LARGE', op: 'getChildren', path: '/wide' });
    await assert.rejects(large, hasCode('REPLY_TOO_LARGE', 'maxReplyBytes', `(${limit})`));

    // The skipped reply's header still counted: the session saw the zxid it carried.
    const session = (client as unknown as { session: { lastZxid: bigint } }).session;
    assert.ok(session.lastZxid >= lastCreate, `lastZxid ${session.lastZxid} < ${lastCreate}`);

    assert.equal((await within(client.getData('/wide'), ROUND_TRIPS_MS, 'a later request')).data.toString(), 'small');
    assert.deepEqual(events, [], 'the connection was not dropped');
    assert.equal(client.sessionId, sessionId);
    assert.equal(client.state, 'connected');
  });

  it('reads a watch event over maxReplyBytes whole and delivers it, keeping the connection', async () => {
    const client = await zk.client({ maxReplyBytes: 1024 });
    const errors: string[] = [];
    client.on('connectionError', (reason: unknown) => errors.push(String(reason)));
    // The event carries the path: 28 bytes of header, type and state, then its 1,101 characters.
    const path = `/${'w'.repeat(1100)}`;
    await zk.admin.create(path, 'v1');
    const fired = deferred<WatchEvent>();
    await client.exists(path, { watch: (event) => fired.resolve(event) });
    await zk.admin.setData(path, 'v2');
    assert.deepEqual(await within(fired.promise, ROUND_TRIPS_MS, 'the watch event'), { type: 'dataChanged', path });
    assert.deepEqual(errors, [], 'the connection was not dropped');
  });

  it('rejects a limit that is not a whole number of bytes in [1 KiB, 256 MiB] with INVALID_ARGUMENT naming it', async () => {
    const cases: [keyof ClientOptions, number][] = [
      ['maxRequestBytes', 1023],
      ['maxRequestBytes', 2 ** 28 + 1],
      ['maxReplyBytes', 0],
      ['maxReplyBytes', 65536.5],
      ['maxReplyBytes', Number.NaN],
    ];
    for (const [name, value] of cases) {
      let client: ZooKeeperClient | undefined;
      try {
        client = new ZooKeeperClient(zk.server.connectString, { [name]: value });
      } catch (error) {
        hasCode('INVALID_ARGUMENT', name)(error);
        continue;
      } finally {
        await client?.close();
      }
      assert.fail(`${name}: ${value} was accepted`);
    }
  });
});
