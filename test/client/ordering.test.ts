import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ZooKeeperClient, ZooKeeperError } from '../../src/index.js';
import type { ProxyRequest } from '../../src/testing/index.js';
import { FaultProxy } from '../../src/testing/index.js';
import { ROUND_TRIPS_MS, sessionBound } from '../support/bounds.js';
import { deferred } from '../support/wait.js';
import { RecipeFixture, within } from '../recipes/fixtures.js';

/** The opcode of create (the client always sends create2). */
const CREATE2 = 15;

/** Rounds of each race: the defect showed in about a quarter of them. */
const ROUNDS = 250;

/**
 * The server sends a session's replies and watch events in one order; the client must deliver
 * them in that order. Watchers were called while the frames were decoded, replies settled through
 * promises: a watch event overtook the `await` continuation of the reply sent before it.
 */
describe('replies and watch events reach the caller in the order the server sent them', () => {
  let zk: RecipeFixture;
  let client: ZooKeeperClient;
  before(async () => {
    zk = await RecipeFixture.start();
    client = await zk.client();
  });
  after(async () => {
    await zk?.close();
  });

  it('await getData(p, { watch }) resumes before the watch fired by a setData pipelined behind it', async () => {
    await client.create('/order', '0');
    const wrong: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const log: string[] = [];
      const fired = deferred<void>();
      let dirty = false;
      const reader = (async () => {
        await client.getData('/order', {
          watch: () => {
            dirty = true;
            log.push('watch');
            fired.resolve();
          },
        });
        // The reply is consumed: only a change after it may make the node dirty again.
        dirty = false;
        log.push('getData');
      })();
      const writer = (async () => {
        await client.setData('/order', String(round));
        log.push('setData');
      })();
      await within(Promise.all([reader, writer, fired.promise]), ROUND_TRIPS_MS, `round ${round}`);
      assert.equal(dirty, true, `round ${round}: the change made after the read was lost (${log.join(' → ')})`);
      if (log.join() !== 'getData,watch,setData') wrong.push(`round ${round}: ${log.join(' → ')}`);
    }
    assert.deepEqual(wrong, [], 'the server sent: getData reply, watch event, setData reply');
  });

  it('a watch event waits for the reply before it, and the replies after it (a read that sees the change) wait for the event', async () => {
    await client.create('/order-later', '0');
    const wrong: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const log: string[] = [];
      const fired = deferred<void>();
      // Pipelined: getData's reply, setData's event, setData's reply, then the read that sees the new data.
      const watched = client.getData('/order-later', { watch: () => (log.push('watch'), fired.resolve()) }).then(() => log.push('getData'));
      const write = client.setData('/order-later', String(round)).then(() => log.push('setData'));
      const read = client.getData('/order-later').then(({ data }) => log.push(`read ${data.toString()}`));
      await within(Promise.all([watched, write, read, fired.promise]), ROUND_TRIPS_MS, `round ${round}`);
      const at = (entry: string): number => log.indexOf(entry);
      if (!(at('getData') < at('watch') && at('watch') < at('setData') && at('watch') < at(`read ${round}`))) wrong.push(`round ${round}: ${log.join(' → ')}`);
    }
    assert.deepEqual(wrong, []);
  });

  it('the callbacks of pipelined requests run in the order the server answered them, whatever the operations', async () => {
    await client.create('/order-pairs', '0');
    // Each pair: the first is asked, then the second, in one tick; both replies come in one read.
    const pairs: [string, () => Promise<unknown>, string, () => Promise<unknown>][] = [
      ['setData', () => client.setData('/order-pairs', 'x'), 'exists', () => client.exists('/order-pairs')],
      ['create', () => client.create('/order-pairs/s-', '', { mode: 'PERSISTENT_SEQUENTIAL' }), 'getData', () => client.getData('/order-pairs')],
      ['getACL', () => client.getACL('/order-pairs'), 'exists', () => client.exists('/order-pairs')],
      ['sync', () => client.sync('/'), 'getData', () => client.getData('/order-pairs')],
      ['multi', () => client.multi([{ op: 'check', path: '/order-pairs', version: -1 }]), 'getChildren', () => client.getChildren('/order-pairs')],
      ['delete', () => client.delete('/order-pairs/missing'), 'getData', () => client.getData('/order-pairs', { watch: () => undefined })],
    ];
    const wrong: string[] = [];
    for (const [first, askFirst, second, askSecond] of pairs) {
      let overtaken = 0;
      for (let round = 0; round < 100; round++) {
        const log: string[] = [];
        // A failure (delete's NONODE) is an answer too: its callback is as deep as a success's.
        const seen = (name: string) => (): number => log.push(name);
        await within(Promise.all([askFirst().then(seen(first), seen(first)), askSecond().then(seen(second), seen(second))]), ROUND_TRIPS_MS, `${first}, ${second}`);
        if (log[0] !== first) overtaken++;
      }
      if (overtaken > 0) wrong.push(`${second} before ${first} in ${overtaken} of 100 rounds`);
    }
    assert.deepEqual(wrong, [], 'as in Java, whose callbacks run in order on one thread');
  });
});

/** More creates than maxInFlight (2048 by default): some are in flight, the rest wait in the client. */
const PIPELINED = 3000;

/** The index each node `n-<i>` under `parent` carries in its name, sorted. */
async function created(zk: RecipeFixture, parent: string): Promise<number[]> {
  return (await zk.children(parent)).map((name) => Number(name.slice(2))).sort((a, b) => a - b);
}

/**
 * A connection lost with requests in flight and more waiting behind them: those waiting went out
 * on the next connection, so what ran was not a prefix of what was asked (#0–#2047 lost, #2048–
 * #2999 run). Now everything asked before the loss fails, as in Java; what is asked after it
 * waits for the next connection.
 */
describe('a connection lost with requests in flight and queued', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  /** Pipelines PIPELINED creates and resets the connection as create number `resetAt` (from 1) reaches the proxy. */
  async function lose(parent: string, resetAt: number): Promise<void> {
    await zk.admin.create(parent);
    let armed = false;
    let seen = 0;
    const proxy = await FaultProxy.start({
      targetPort: zk.server.port,
      onRequest: ({ opcode }: ProxyRequest) => {
        if (!armed || opcode !== CREATE2) return 'forward';
        if (++seen < resetAt) return 'forward';
        armed = false;
        return 'reset';
      },
    });
    const client = await ZooKeeperClient.connect(proxy.connectString, { sessionTimeout: 20_000 });
    try {
      // Asked once the loss is known: it waits for the next connection, and runs there.
      let later: Promise<unknown> | undefined;
      client.once('suspended', () => {
        later = client.create(`${parent}/after`);
        later.catch(() => undefined); // awaited below
      });
      armed = true;
      const calls = Array.from({ length: PIPELINED }, (_, i) => client.create(`${parent}/n-${i}`, String(i)));
      const outcomes = await within(Promise.allSettled(calls), sessionBound(client.sessionTimeout), 'every create settles');
      const succeeded = outcomes.flatMap((o, i) => (o.status === 'fulfilled' ? [i] : []));
      for (const o of outcomes) {
        if (o.status === 'rejected') assert.ok(o.reason instanceof ZooKeeperError && o.reason.code === 'CONNECTIONLOSS', String(o.reason));
      }
      assert.ok(later, 'the session was suspended');
      await within(later, sessionBound(client.sessionTimeout), 'the create asked after the loss runs on the next connection');
      // Answered on the new connection: anything of the batch still to run would have run before it.
      await client.sync(parent);
      const ran = (await created(zk, parent)).filter((i) => Number.isInteger(i));
      assert.deepEqual(ran, [...ran.keys()], `what ran is a prefix of what was asked (ran: ${ran.length}, first ${ran.slice(0, 3).join()} … last ${ran.slice(-3).join()})`);
      assert.deepEqual(succeeded, [...succeeded.keys()], 'what succeeded is a prefix too');
      assert.ok(ran.length < resetAt, 'nothing from the create that met the reset on');
    } finally {
      await client.close();
      await proxy.close();
    }
  }

  it('as the first of 3,000 pipelined creates arrives: every one fails with CONNECTIONLOSS, none runs after the reconnect', async () => {
    await lose('/lost-first', 1);
  });

  it('as the 1,000th arrives: what ran is a prefix of what was asked', async () => {
    await lose('/lost-middle', 1000);
  });
});
