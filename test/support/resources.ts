import assert from 'node:assert/strict';
import { ROUND_TRIPS_MS } from './bounds.js';
import { eventually } from './wait.js';

/** The process's open handles and timers (but the terminal's), sorted. */
export function openResources(): string[] {
  return process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap').sort();
}

/** The resources open now that were not open (as many times) in `before`. */
function added(before: readonly string[]): string[] {
  const left = [...before];
  return openResources().filter((r) => {
    const at = left.indexOf(r);
    if (at < 0) return true;
    left.splice(at, 1);
    return false;
  });
}

/**
 * Waits (bounded) until no resource is open beyond those of `before`. A closed handle is
 * released a turn or more of the event loop after close() returns, so one look could see it
 * still there; one of `before` may have gone meanwhile, which is fine.
 */
export async function expectNothingLeft(before: readonly string[], what = 'no timer or socket left behind'): Promise<void> {
  await eventually(() => added(before).length === 0, ROUND_TRIPS_MS, what).catch(() => undefined);
  assert.deepEqual(added(before), [], what);
}
