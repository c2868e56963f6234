import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SessionEvent, ZooKeeperError } from '../../src/index.js';
import { ZooKeeperClient, isZooKeeperError } from '../../src/index.js';
import { eventually } from '../support/wait.js';

/** Compiles only when `value` has type T: the checks below are made by `npm run typecheck`. */
function expectType<T>(value: T): T {
  return value;
}

describe('client events', () => {
  it('are typed: each listener gets its arguments, and a misspelt event fails to compile', async () => {
    // Nothing listens on port 1: the client keeps failing to connect until closed.
    const client = new ZooKeeperClient('127.0.0.1:1', { sessionTimeout: 2000 });
    const errors: Error[] = [];
    const states: [SessionEvent, ZooKeeperError | undefined][] = [];
    let closed = 0;
    client.on('connectionError', (error) => errors.push(expectType<Error>(error)));
    client.on('state', (event, reason) => states.push([expectType<SessionEvent>(event), expectType<ZooKeeperError | undefined>(reason)]));
    client.on('closed', (...args) => {
      expectType<[reason?: ZooKeeperError]>(args);
      closed++;
    });
    client.on('expired', (reason) => expectType<ZooKeeperError>(reason));
    // @ts-expect-error -- no such event
    client.on('conected', () => undefined);
    // @ts-expect-error -- suspended's reason is a ZooKeeperError, not a string
    client.on('suspended', (reason: string) => reason);
    try {
      await eventually(() => errors.length > 0, 10_000, 'a refused connection reported');
      assert.ok(isZooKeeperError(errors[0], 'CONNECTIONLOSS'));
      assert.equal((errors[0].cause as NodeJS.ErrnoException).code, 'ECONNREFUSED');
    } finally {
      await client.close();
    }
    assert.deepEqual(states, [['closed', undefined]]);
    assert.equal(closed, 1);
  });
});
