import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { DEFAULT_START_TIMEOUT_MS, DEFAULT_STOP_TIMEOUT_MS, findHarnessProcesses, isProcessAlive } from '../../src/testing/index.js';
import { ROUND_TRIPS_MS } from '../support/bounds.js';
import { assertNoJvmLeftBehind, waitUntilGone } from './helpers/processes.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/owner-process.ts', import.meta.url));
// Starting Node with tsx takes seconds on a busy machine, then the harness starts a server; the
// cleanup may stop it gracefully first (bounded by the harness's stop timeout).
const STARTUP_TIMEOUT_MS = ROUND_TRIPS_MS + DEFAULT_START_TIMEOUT_MS;
const CLEANUP_TIMEOUT_MS = ROUND_TRIPS_MS + DEFAULT_STOP_TIMEOUT_MS;
// One owner per test: three signals, an uncaught exception, a natural exit.
const OWNERS = 5;

interface Owner {
  readonly child: ChildProcess;
  readonly jvmPid: number;
  readonly dir: string;
  /** What the owner wrote to stderr so far. */
  readonly stderr: () => string;
}

async function startOwner(ending: string): Promise<Owner> {
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, ending], { stdio: ['ignore', 'pipe', 'pipe'], env });
  assert.ok(child.stdout !== null && child.stderr !== null);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const lines = createInterface({ input: child.stdout });
  const timer = setTimeout(() => child.kill('SIGKILL'), STARTUP_TIMEOUT_MS);
  try {
    const [line] = (await Promise.race([once(lines, 'line'), once(child, 'exit')])) as [string | number];
    assert.equal(typeof line, 'string', `the owner exited before starting its server:\n${stderr}`);
    return { child, stderr: () => stderr, ...(JSON.parse(String(line)) as { jvmPid: number; dir: string }) };
  } finally {
    clearTimeout(timer);
  }
}

async function assertCleanedUp(owner: Owner): Promise<void> {
  assert.ok(await waitUntilGone(owner.jvmPid, CLEANUP_TIMEOUT_MS), `JVM ${owner.jvmPid} still alive`);
  const deadline = Date.now() + CLEANUP_TIMEOUT_MS;
  while (existsSync(owner.dir) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(existsSync(owner.dir), false, `${owner.dir} still exists`);
}

describe('nothing is left behind when the owning process dies', { timeout: OWNERS * (STARTUP_TIMEOUT_MS + CLEANUP_TIMEOUT_MS) }, () => {
  for (const signal of ['SIGKILL', 'SIGTERM', 'SIGINT'] as const) {
    it(`on ${signal}`, async () => {
      const owner = await startOwner('wait-for-signal');
      assert.equal(await isProcessAlive(owner.jvmPid), true);
      assert.deepEqual(
        (await findHarnessProcesses(owner.child.pid)).map((p) => p.pid),
        [owner.jvmPid],
        'the JVM is marked with its owner pid',
      );
      const exited = once(owner.child, 'exit');
      owner.child.kill(signal);
      await exited;
      await assertCleanedUp(owner);
    });
  }

  it('on an uncaught exception', async () => {
    const owner = await startOwner('uncaught-exception');
    const [code] = (await once(owner.child, 'exit')) as [number | null];
    assert.equal(code, 1);
    assert.match(owner.stderr(), /deliberate uncaught exception/);
    await assertCleanedUp(owner);
  });

  it('on a natural exit, which the harness does not delay', async () => {
    const owner = await startOwner('natural-exit');
    const [code] = (await once(owner.child, 'exit')) as [number | null];
    assert.equal(code, 0);
    await assertCleanedUp(owner);
  });
});

it('leaves no JVM of this test process behind', async () => {
  await assertNoJvmLeftBehind();
});
