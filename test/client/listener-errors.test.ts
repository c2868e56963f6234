import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { ZooKeeperServer } from '../../src/testing/index.js';

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
    const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, String(server.port)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 0, `the process survived: ${err}`);
    const result = JSON.parse(out.trim().split('\n').pop()!) as {
      setData: string;
      secondWatcher: unknown;
      persistentSetData: string;
      secondListener: unknown;
      sameSession: boolean;
      uncaught: string[];
    };
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
