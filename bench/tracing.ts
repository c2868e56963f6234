import { pathToFileURL } from 'node:url';
import type * as Zklock from '../src/index.js';
import type { Bench } from './context.js';
import type { Measurement } from './measure.js';
import { cpuPerOp, measure, medianOf, perSecond, takeTurns } from './measure.js';
import type { Row } from './report.js';
import * as shipped from './zklock.js';
import { tracingGuardRows } from './tracing-guards.js';

/** A build of zklock: this one's dist/, or --baseline's (the commit before tracing, say). */
type Build = Pick<typeof Zklock, 'ZooKeeperClient' | 'Mutex'>;

/** At least this many alternating rounds: a difference within noise is told only by a spread. */
const MIN_ROUNDS = 5;

/** Every channel zklock publishes on, subscribed with a listener that only counts. */
function subscribeEverything(): () => void {
  let seen = 0;
  const listener = (): void => void seen++;
  const tracing = [shipped.requestChannel, shipped.acquireChannel, shipped.releaseChannel];
  const plain = [shipped.sessionChannel, shipped.watchChannel, shipped.lostChannel, shipped.revocationChannel];
  const channels = [...tracing.flatMap((t) => [t.start, t.end, t.asyncStart, t.asyncEnd, t.error]), ...plain];
  for (const channel of channels) channel.subscribe(listener);
  return () => {
    for (const channel of channels) channel.unsubscribe(listener);
  };
}

/** `ops` uncontended acquire/release cycles, or sequential getData calls, on one session of `build`. */
async function workload(bench: Bench, build: Build, kind: 'cycles' | 'getData', path: string): Promise<Measurement> {
  const { lockCycles, sequentialOps, warmupOps } = bench.config;
  const client = await build.ZooKeeperClient.connect(bench.connectString, { sessionTimeout: 30_000 });
  try {
    if (kind === 'getData') {
      await client.ensurePath(path);
      for (let i = 0; i < warmupOps; i++) await client.getData(path);
      return await measure(sequentialOps, async () => {
        for (let i = 0; i < sequentialOps; i++) await client.getData(path);
      });
    }
    const mutex = new build.Mutex(client, path);
    for (let i = 0; i < Math.min(warmupOps, lockCycles); i++) await (await mutex.acquire()).release();
    return await measure(lockCycles, async () => {
      for (let i = 0; i < lockCycles; i++) await (await mutex.acquire()).release();
    });
  } finally {
    await client.close();
  }
}

/**
 * What tracing costs: the same workloads with no subscriber, with a subscriber on every channel,
 * and, given `--baseline <dir>` (another build of zklock), on that build, in alternating rounds.
 * Ops/s and client CPU per op, medians with their range over the rounds.
 */
export async function tracingScenarios(bench: Bench): Promise<Row[]> {
  const baseline = bench.config.baseline === undefined ? undefined : ((await import(pathToFileURL(`${bench.config.baseline}/dist/index.js`).href)) as Build);
  const rounds = Math.max(bench.config.rounds, MIN_ROUNDS);
  const rows: Row[] = tracingGuardRows(rounds);
  for (const kind of ['cycles', 'getData'] as const) {
    let run = 0;
    const path = (): string => `${bench.root}/tracing-${kind}-${++run}`;
    const contestants: Record<string, () => Promise<Measurement>> = {
      ...(baseline ? { baseline: () => workload(bench, baseline, kind, path()) } : {}),
      'no subscriber': () => workload(bench, shipped, kind, path()),
      'every channel subscribed': async () => {
        const unsubscribe = subscribeEverything();
        try {
          return await workload(bench, shipped, kind, path());
        } finally {
          unsubscribe();
        }
      },
    };
    const label = kind === 'cycles' ? 'uncontended acquire/release' : 'getData, sequential';
    for (const [condition, runs] of await takeTurns(rounds, contestants)) {
      const throughput = medianOf(runs.map(perSecond));
      const cpu = medianOf(runs.map(cpuPerOp));
      const who = condition === 'baseline' ? `baseline ${bench.config.baseline}, no subscriber` : condition;
      rows.push({
        group: 'tracing',
        scenario: `${label}: ${who}`,
        unit: 'ops/s',
        better: 'higher',
        compare: false,
        samples: { zklock: { value: throughput.value, range: throughput.range, cpuUsPerOp: cpu.value, detail: { rounds, cpuUsPerOpRange: cpu.range } } },
      });
    }
    bench.log(`  tracing, ${label}: done`);
  }
  return rows;
}
