import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { ZooKeeperServer } from '../../src/testing/index.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const EXAMPLE = fileURLToPath(new URL('../../examples/opentelemetry/', import.meta.url));
/** Installing the example's packages from the registry, building the library: generous on a busy machine. */
const SETUP_MS = 300_000;

/** Runs `command` to its end; rejects with its output when it fails. */
function run(command: string, args: string[], cwd: string): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve({ stdout, stderr }) : reject(new Error(`${command} ${args.join(' ')} exited ${code}: ${stderr}${stdout}`))));
  });
}

/**
 * examples/opentelemetry runs as a user would run it: its own packages (OpenTelemetry's, never
 * the library's) installed from its lockfile on a fresh clone, zklock as built (`npm test` builds
 * first; alone, this test builds when dist/ is missing), against a real server.
 */
describe('examples/opentelemetry', () => {
  let server: ZooKeeperServer;
  before(async () => {
    // zklock is the example's dependency `file:../..`, a link npm makes: reinstalled when either is missing.
    if (!existsSync(`${EXAMPLE}node_modules/@opentelemetry/sdk-metrics`) || !existsSync(`${EXAMPLE}node_modules/zklock/package.json`)) {
      await run('npm', ['ci', '--no-audit', '--no-fund'], EXAMPLE);
    }
    if (!existsSync(`${ROOT}dist/index.js`)) await run('npm', ['run', 'build'], ROOT);
    server = await ZooKeeperServer.start();
  }, { timeout: SETUP_MS });
  after(async () => {
    await server?.close();
  });

  it('prints the acquire and release spans, the wait-time and hold-time histograms and the lost-lock counter', { timeout: 120_000 }, async () => {
    const { stdout } = await run(process.execPath, ['index.mjs', server.connectString], EXAMPLE);
    for (const expected of [
      "name: 'zklock.acquire'",
      "name: 'zklock.release'",
      // Bob's acquire behind Alice, and his timeout's span.
      "'zklock.lock.queue_position': 1",
      "name: 'exception'",
      'bob: LOCK_TIMEOUT',
      "'zklock.lock.hold_time_ms'",
      "name: 'zklock.lock.wait_time'",
      "name: 'zklock.lock.hold_time'",
      "name: 'zklock.lock.lost'",
      "'zklock.lock.reason': 'NODE_DELETED'",
      "'zklock.outcome': 'LOCK_TIMEOUT'",
      "bob's try: null",
      "'zklock.outcome': 'NOT_FREE'",
    ]) {
      assert.ok(stdout.includes(expected), `${expected} in:\n${stdout}`);
    }
  });
});
