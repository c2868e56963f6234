import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ZooKeeperClient } from '../../src/index.js';
import { ZooKeeperServer } from '../../src/testing/index.js';
import { sessionBound } from '../support/bounds.js';
import { RecipeFixture, within } from '../recipes/fixtures.js';

/** Self-checking data: the node's name and a counter, repeated to `size` bytes. */
function payload(name: string, n: number, size: number): Buffer {
  const unit = `${name}#${n};`;
  return Buffer.from(unit.repeat(Math.ceil(size / unit.length)).slice(0, size));
}
function check(name: string, data: Buffer | null, size: number): void {
  assert.ok(data, `${name}: data`);
  const text = data.toString();
  const m = /^([^#]+)#(\d+);/.exec(text);
  assert.ok(m, `${name}: parseable data, got ${JSON.stringify(text.slice(0, 40))}`);
  assert.equal(m[1], name, 'data of its own node');
  assert.deepEqual(data, payload(name, Number(m[2]), size), `${name}: intact`);
}

describe('several clients of one process reading into the shared buffer, replies and watch events interleaved', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  it('every getData reply is the node it asked for, intact, with watch events and big replies from other sessions between', async () => {
    const writer = await zk.client();
    const readers: ZooKeeperClient[] = [];
    for (let i = 0; i < 3; i++) readers.push((await zk.viaProxy({ sessionTimeout: 20_000 })).client);
    readers.push(await zk.client({ sessionTimeout: 20_000 }));
    await writer.create('/sb');
    const nodes = 20;
    const sizes = [10, 300, 5000, 70_000];
    for (let i = 0; i < nodes; i++) await writer.create(`/sb/n${i}`, payload(`n${i}`, 0, sizes[i % sizes.length]!));
    let stop = false;
    const events: string[] = [];
    const writes = (async () => {
      for (let n = 1; !stop; n++) {
        await Promise.all(Array.from({ length: nodes }, (_, i) => writer.setData(`/sb/n${i}`, payload(`n${i}`, n, sizes[i % sizes.length]!))));
      }
    })();
    const reads = readers.map(async (client, r) => {
      const watcher = (event: { type: string; path: string }): void => {
        events.push(`${r}:${event.type}:${event.path}`);
      };
      for (let round = 0; round < 5; round++) {
        await Promise.all(
          Array.from({ length: nodes }, async (_, i) => {
            const name = `n${i}`;
            const { data } = await client.getData(`/sb/${name}`, { watch: round % 2 === 0 ? watcher : undefined });
            check(name, data, sizes[i % sizes.length]!);
          }),
        );
        const { children } = await client.getChildren('/sb', { watch: watcher });
        assert.equal(children.length, nodes);
      }
    });
    try {
      await within(Promise.all(reads), sessionBound(20_000) * 3, 'every read answered');
    } finally {
      stop = true;
      await writes;
    }
    for (const e of events) assert.match(e, /^\d:(dataChanged|childrenChanged):\/sb(\/n\d+)?$/);
    assert.ok(events.length > 0);
  });

  it('TLS and plain clients of one process, deep pipelines of big and small replies: every reply intact', async () => {
    const server = await ZooKeeperServer.start({ tls: true });
    const clients: ZooKeeperClient[] = [];
    try {
      const tls = { ca: server.tlsCertificatePem! };
      for (let i = 0; i < 2; i++) clients.push(await ZooKeeperClient.connect(server.secureConnectString!, { tls, sessionTimeout: 20_000 }));
      for (let i = 0; i < 2; i++) clients.push(await ZooKeeperClient.connect(server.connectString, { sessionTimeout: 20_000 }));
      const writer = clients[0]!;
      await writer.create('/mix');
      const sizes = [7, 900, 20_000, 130_000];
      for (let i = 0; i < 24; i++) await writer.create(`/mix/n${i}`, payload(`n${i}`, 0, sizes[i % sizes.length]!));
      let stop = false;
      const writes = (async () => {
        for (let n = 1; !stop; n++) await Promise.all(Array.from({ length: 24 }, (_, i) => writer.setData(`/mix/n${i}`, payload(`n${i}`, n, sizes[i % sizes.length]!))));
      })();
      const reads = clients.map(async (client) => {
        for (let round = 0; round < 4; round++) {
          await Promise.all(
            Array.from({ length: 48 }, async (_, k) => {
              const i = k % 24;
              const { data } = await client.getData(`/mix/n${i}`, { watch: round % 2 === 0 ? () => undefined : undefined });
              check(`n${i}`, data, sizes[i % sizes.length]!);
            }),
          );
        }
      });
      try {
        await within(Promise.all(reads), sessionBound(20_000) * 3, 'every read answered');
      } finally {
        stop = true;
        await writes;
      }
    } finally {
      await Promise.all(clients.map((c) => c.close()));
      await server.close();
    }
  });
});
