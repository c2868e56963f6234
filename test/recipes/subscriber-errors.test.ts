import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { ZooKeeperServer } from '../../src/testing/index.js';
import { runScript } from '../support/run-script.js';

const SCRIPT = fileURLToPath(new URL('./fixtures/throwing-subscriber.ts', import.meta.url));

/**
 * A diagnostics subscriber runs inside the client's and the locks' own code (a watcher, a
 * request's settlement, a lease's loss). Our guarantee, Node's for every diagnostics channel:
 * a subscriber that throws costs the library nothing; its error is rethrown on its own
 * (uncaughtException on a later tick). In a child process, whose handler records it.
 */
describe('a diagnostics subscriber that throws', () => {
  let server: ZooKeeperServer;
  before(async () => {
    server = await ZooKeeperServer.start();
  });
  after(async () => {
    await server?.close();
  });

  it('costs a waiter nothing: the Mutex and the Semaphore are still acquired, a loss still reaches the lease, and each error is rethrown on its own', { timeout: 90_000 }, async () => {
    const { code, result, stderr } = await runScript<{ mutex: string; semaphore: string; lost: string; uncaught: string[] }>(SCRIPT, [String(server.port)]);
    assert.equal(code, 0, `the process survived: ${stderr}`);
    assert.deepEqual(result, {
      mutex: 'held',
      semaphore: 'held',
      lost: 'NODE_DELETED',
      uncaught: ['boom: acquire', 'boom: lost', 'boom: release', 'boom: request', 'boom: session', 'boom: watch'],
    });
  });
});
