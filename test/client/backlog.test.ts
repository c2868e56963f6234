import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ZooKeeperClient } from '../../src/index.js';
import { ZooKeeperError } from '../../src/index.js';
import { ROUND_TRIPS_MS, sessionBound } from '../support/bounds.js';
import { nextEvent } from '../support/wait.js';
import { RecipeFixture, within } from '../recipes/fixtures.js';

/** More requests than the client fails in one turn of the event loop. */
const BACKLOG = 5000;
/** Enough that failing them takes longer than a reconnect: a request written meanwhile would be answered first. */
const LOST_BACKLOG = 50_000;

/**
 * How `count` getData calls end: their errors, the order they end in (filled into `order` as
 * they do), and whether each ended after the turn of the event loop in which `start()` began
 * failing them.
 */
async function failBacklog(
  client: ZooKeeperClient,
  count: number,
  start: () => Promise<unknown>,
  order: number[] = [],
): Promise<{ order: number[]; errors: unknown[]; afterFirstTurn: boolean[] }> {
  const afterFirstTurn: boolean[] = [];
  let turnEnded = false;
  const calls = Array.from({ length: count }, (_, i) =>
    client.getData(`/backlog/${i}`).then(
      () => assert.fail(`request ${i} succeeded`),
      (error: unknown) => {
        order.push(i);
        afterFirstTurn.push(turnEnded);
        return error;
      },
    ),
  );
  // Let the requests go out (or wait), then start the failing with a probe queued for the next turn.
  await new Promise((resolve) => setImmediate(resolve));
  setImmediate(() => (turnEnded = true));
  await start();
  const errors = await within(Promise.all(calls), ROUND_TRIPS_MS, 'every request fails');
  return { order, errors, afterFirstTurn };
}

/**
 * Failing a large backlog at once blocked the event loop for as long as it took (300,000
 * requests: seconds, starving the pings of every other session in the process). The failing is
 * now spread over turns of the loop, in order, and nothing new is written meanwhile.
 */
describe('failing a backlog of requests', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  it('close() fails the queued requests over several turns of the event loop, in call order, each with its op and path and no stack', async () => {
    const { client, proxy } = await zk.viaProxy({ sessionTimeout: 20_000 });
    const suspended = nextEvent(client, 'suspended', ROUND_TRIPS_MS);
    proxy.refuseNew(true);
    proxy.resetAll();
    await suspended;
    const { order, errors, afterFirstTurn } = await failBacklog(client, BACKLOG, () => client.close());
    assert.deepEqual(order, [...Array(BACKLOG).keys()], 'rejected in call order');
    errors.forEach((error, i) => {
      assert.ok(error instanceof ZooKeeperError && error.code === 'CLOSED' && error.op === 'getData' && error.path === `/backlog/${i}`, String(error));
    });
    assert.doesNotMatch((errors[0] as Error).stack ?? '', /\n\s+at /);
    assert.equal(afterFirstTurn[0], false, 'the first ones fail at once');
    assert.equal(afterFirstTurn.at(-1), true, 'the last ones fail in a later turn');
  });

  it('a connection loss fails the requests in flight over several turns, and the next request goes out only after the last of them failed', async () => {
    // A long session, as above: the server works through 50,000 requests whose answers are lost
    // while the client fails them a slice a turn and reconnects. On a busy machine that outlasted
    // the proxy's default 2 s session: the server expired it, and the later request said so.
    const { client, proxy } = await zk.viaProxy({ maxInFlight: Infinity, sessionTimeout: 20_000 });
    proxy.blackhole('downstream');
    const order: number[] = [];
    let later: Promise<number> | undefined;
    client.once('suspended', () => {
      later = client.getData('/').then(() => order.length);
      later.catch(() => undefined); // awaited below, unless an assertion fails first
    });
    const { errors, afterFirstTurn } = await failBacklog(
      client,
      LOST_BACKLOG,
      () => {
        proxy.resetAll();
        proxy.passThrough();
        return Promise.resolve();
      },
      order,
    );
    assert.deepEqual(order, [...Array(LOST_BACKLOG).keys()], 'rejected in call order');
    assert.ok(errors.every((error) => error instanceof ZooKeeperError && error.code === 'CONNECTIONLOSS'));
    assert.equal(afterFirstTurn.at(-1), true, 'the last ones fail in a later turn');
    assert.ok(later, 'the session was suspended');
    assert.equal(await within(later, sessionBound(client.sessionTimeout), 'the later request is answered'), LOST_BACKLOG, 'answered after every older request failed');
  });
});
