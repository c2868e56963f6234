/**
 * What tracing adds with no subscriber, with no server: the `hasSubscribers` checks each
 * acquire/release and each request make before they take the untraced path. A round trip's noise
 * (tens of µs) hides anything below a few µs; this measures the checks alone, in ns.
 * `node --import tsx bench/tracing-guards.ts` prints the rows on their own.
 */
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { requestChannel } from '../src/client/diagnostics.js';
import { lockTraced, lostChannel, releaseChannel } from '../src/recipes/diagnostics.js';
import type { Row } from './report.js';

const CALLS = 10_000_000;

/** The checks as the code makes them: an acquire's, its lease's monitor's and its release's; one request's. */
const GUARDS = {
  'the lock checks of one acquire/release': (): boolean => lockTraced() || lostChannel.hasSubscribers || releaseChannel.hasSubscribers,
  'the check of one request': (): boolean => requestChannel.hasSubscribers,
  // The loop's own cost, to subtract: what a build without the checks would measure.
  'an empty function (the floor)': (): boolean => false,
} as const;

/** ns per call of `guard` over CALLS calls; a true answer is counted so that the calls are not optimized away. */
function nsPerCall(guard: () => boolean): number {
  let yes = 0;
  const t0 = performance.now();
  for (let i = 0; i < CALLS; i++) if (guard()) yes++;
  const ns = ((performance.now() - t0) * 1e6) / CALLS;
  if (yes !== 0) throw new Error('a subscriber is listening: the guards would not take the untraced path');
  return ns;
}

/** One row per guard: the median of `rounds` timings (after one untimed for the JIT). */
export function tracingGuardRows(rounds: number): Row[] {
  return Object.entries(GUARDS).map(([what, guard]) => {
    nsPerCall(guard);
    const times = Array.from({ length: Math.max(3, rounds) }, () => nsPerCall(guard)).sort((a, b) => a - b);
    return {
      group: 'tracing',
      scenario: `no subscriber: ${what}, no server`,
      unit: 'ns',
      better: 'lower',
      compare: false,
      samples: { zklock: { value: times[Math.floor(times.length / 2)]!, range: { min: times[0]!, max: times[times.length - 1]! } } },
    } satisfies Row;
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const row of tracingGuardRows(5)) console.log(`${row.scenario}: ${row.samples.zklock!.value.toFixed(2)} ns`);
}
