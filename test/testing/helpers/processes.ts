import assert from 'node:assert/strict';
import { findHarnessProcesses, isProcessAlive } from '../../../src/testing/index.js';

/** Polls until `pid` is gone (zombies count as gone); false if it is still alive after `timeoutMs`. */
export async function waitUntilGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (await isProcessAlive(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

/** Fails when a JVM marked as started by this test process is still running. */
export async function assertNoJvmLeftBehind(): Promise<void> {
  const leftovers = await findHarnessProcesses(process.pid);
  assert.deepEqual(
    leftovers.map((p) => p.pid),
    [],
    `JVMs left behind: ${leftovers.map((p) => p.command.slice(0, 200)).join('\n')}`,
  );
}
