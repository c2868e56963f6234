import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { ZooKeeperServer } from '../../src/testing/index.js';
import { runScript } from '../support/run-script.js';

const SCRIPT = fileURLToPath(new URL('./fixtures/throwing-listeners.ts', import.meta.url));

/**
 * Listeners and watchers run inside the session's frame and reconnect loops. Before: a throwing
 * `connectionError` listener rejected the reconnect loop unhandled (the process exited 1), and a
 * throwing `connected` listener or watcher was taken for a protocol error that dropped the
 * connection (the setData that fired the watch failed with CONNECTIONLOSS though it was applied);
 * so was a throwing listener of a persistent watch, which also cost the listeners after it the event.
 */
describe('application listeners and watchers that throw', () => {
  let server: ZooKeeperServer;
  before(async () => {
    server = await ZooKeeperServer.start();
  });
  after(async () => {
    await server?.close();
  });

  it('cost the session nothing: reconnecting goes on, requests succeed, other watchers fire, and each error is rethrown on its own', { timeout: 90_000 }, async () => {
    const { code, result, stderr } = await runScript<{
      setData: string;
      secondWatcher: unknown;
      persistentSetData: string;
      secondListener: unknown;
      sameSession: boolean;
      uncaught: string[];
    }>(SCRIPT, [String(server.port)]);
    assert.equal(code, 0, `the process survived: ${stderr}`);
    assert.ok(result, 'the fixture printed its result');
    assert.equal(result.setData, 'ok', 'the setData that fired the watch succeeded');
    assert.deepEqual(result.secondWatcher, { type: 'dataChanged', path: result.secondWatcher && (result.secondWatcher as { path: string }).path });
    assert.equal(result.persistentSetData, 'ok', 'the setData that fired the persistent watch succeeded');
    assert.deepEqual(result.secondListener, { type: 'dataChanged', path: result.secondListener && (result.secondListener as { path: string }).path });
    assert.ok(result.sameSession, 'no reconnect to a new session');
    assert.deepEqual(result.uncaught, [
      'boom: connected listener',
      'boom: connectionError listener',
      'boom: first watcher',
      'boom: onState listener',
      'boom: persistent listener',
      'boom: state listener',
    ]);
  });
});
