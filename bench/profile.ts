import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import type { Profiler, Runtime } from 'node:inspector';
import type { Bench } from './context.js';
import { contendInProcess } from './lock-contention.js';
import { zklockSession } from './lock-session.js';
import { perSecond } from './measure.js';
import type { Row } from './report.js';

/** Where a sample's own time is charged: zklock's layers by their directory, the rest by what V8 names it. */
const LAYERS: readonly (readonly [string, (frame: Runtime.CallFrame) => boolean])[] = [
  ['zklock protocol (encode, decode)', (f) => f.url.includes('/dist/protocol/')],
  ['zklock connection (framing, request queue, session)', (f) => f.url.includes('/dist/connection/')],
  ['zklock client (watches, calls, events)', (f) => f.url.includes('/dist/client/')],
  ['zklock recipes (Mutex, queue, lease)', (f) => f.url.includes('/dist/recipes/')],
  ["Node's runtime in JS (net, streams, timers, promises)", (f) => f.url.startsWith('node:')],
  ['garbage collection', (f) => f.functionName === '(garbage collector)'],
  ['V8 and native code (program)', (f) => f.functionName === '(program)'],
  ['idle (waiting on the server)', (f) => f.functionName === '(idle)'],
  // Builtins with no script behind them: the socket write syscalls (writeBuffer, writev), the microtask queue.
  ['native calls (socket writes, microtask queue)', (f) => f.url === ''],
];
const OTHER = 'the benchmark loop and the rest';
/** 100 µs: fine enough for a cycle of about a millisecond, coarse enough to keep the profiler's own cost small. */
const SAMPLING_INTERVAL_US = 100;

/**
 * (h) Where zklock's time goes in the contended scenario (8 sessions, one lock): the same loop as
 * the lock rows' under V8's sampling profiler, each sample's own time charged to the layer whose
 * code was running; idle is the event loop waiting, i.e. on the server. The profile is written
 * beside the results for Chrome's DevTools. The profiler costs some throughput: the run's
 * figures are shown only to give the shares a scale.
 */
export async function profileScenarios(bench: Bench, resultsDir: string): Promise<Row[]> {
  const { sessions, contendedMs: durationMs } = bench.config;
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: SAMPLING_INTERVAL_US });
    let profile: Profiler.Profile | undefined;
    // Around the timed loop alone: connecting the sessions and closing them stay outside.
    const run = await contendInProcess(bench, `${bench.root}/profile-zklock`, { sessions, locks: 1, durationMs }, zklockSession, async (loop) => {
      await session.post('Profiler.start');
      try {
        return await loop();
      } finally {
        ({ profile } = await session.post('Profiler.stop'));
      }
    });
    if (!profile) throw new Error('the profiler gave no profile');
    const file = `${resultsDir}/contended-${new Date().toISOString().replace(/:/g, '-')}.cpuprofile`;
    await writeFile(file, JSON.stringify(profile));
    const shares = selfTimeByLayer(profile);
    const total = [...shares.values()].reduce((a, b) => a + b, 0);
    const cycles = run.m.ops;
    const label = `${sessions} sessions, 1 lock, under the profiler (${perSecond(run.m).toFixed(0)} cycles/s)`;
    return [...shares].map(([layer, us]) => ({
      group: 'profile',
      scenario: `${label}: ${layer}`,
      unit: 'µs per cycle',
      better: 'lower',
      compare: false,
      samples: { zklock: { value: us / cycles, detail: { shareOfWall: us / total } } },
      note: `profile: V8's sampling profiler every ${SAMPLING_INTERVAL_US} µs over one ${durationMs} ms run of zklock's contended loop; each row is the wall time (µs per cycle) whose samples fell in that layer's own code; they add up to the run's wall time per cycle; the profile: ${file}`,
    }));
  } finally {
    session.disconnect();
  }
}

function selfTimeByLayer(profile: Profiler.Profile): Map<string, number> {
  const layerOf = new Map<number, string>();
  for (const node of profile.nodes) layerOf.set(node.id, LAYERS.find(([, matches]) => matches(node.callFrame))?.[0] ?? OTHER);
  const shares = new Map<string, number>([...LAYERS.map(([name]) => [name, 0] as [string, number]), [OTHER, 0]]);
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  // timeDeltas[i] is the time before sample i, which V8 charges to the sample taken then.
  samples.forEach((id, i) => {
    const layer = layerOf.get(id) ?? OTHER;
    shares.set(layer, shares.get(layer)! + (deltas[i] ?? 0));
  });
  return shares;
}
