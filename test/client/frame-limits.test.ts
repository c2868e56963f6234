import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ClientOptions } from '../../src/index.js';
import { ZooKeeperClient } from '../../src/index.js';
import { ROUND_TRIPS_MS } from '../support/bounds.js';
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
