import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unwatchDir, watchDir } from './process-watchdog.js';

/** Creates a fresh directory `<parent>/zklock-<purpose>-XXXXXX` that the watchdog removes if we die. */
export async function createTempDir(purpose: string, parent: string = tmpdir()): Promise<string> {
  const dir = await mkdtemp(join(parent, `zklock-${purpose}-`));
  watchDir(dir);
  return dir;
}

/** Removes a directory made by {@link createTempDir}. */
export async function removeTempDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  unwatchDir(dir);
}
