import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { ZooKeeperServer } from '../../src/testing/index.js';
import { runScript } from '../support/run-script.js';

const SCRIPT = fileURLToPath(new URL('./fixtures/throwing-on-wake.ts', import.meta.url));

/**
 * `onWake` (the herd measurement hook) runs inside a waiter's watcher. Before: a Mutex's throwing
 * onWake kept the watcher from settling its wait, so the waiter never learned its turn had come
 * and failed with LOCK_TIMEOUT; a Semaphore's failed the acquire with the hook's own error.
 */
describe('an onWake that throws', () => {
  let server: ZooKeeperServer;
  before(async () => {
    server = await ZooKeeperServer.start();
  });
  after(async () => {
    await server?.close();
  });

  it('costs the waiter nothing: the Mutex and the Semaphore are still acquired, and the error is rethrown on its own', { timeout: 90_000 }, async () => {
    const { code, result, stderr } = await runScript<{ mutex: string; semaphore: string; uncaught: string[] }>(SCRIPT, [String(server.port)]);
    assert.equal(code, 0, `the process survived: ${stderr}`);
    assert.deepEqual(result, { mutex: 'held', semaphore: 'held', uncaught: ['boom: onWake'] });
  });
});
