import { setTimeout as sleep } from 'node:timers/promises';

/** Polls `done` every `intervalMs` until it holds or `timeoutMs` has passed; the caller reads the state again. */
export async function pollUntil(done: () => boolean, timeoutMs: number, intervalMs = 5): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done() && Date.now() < deadline) await sleep(intervalMs);
}
