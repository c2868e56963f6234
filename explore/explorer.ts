import fc from 'fast-check';
import type { ZooKeeperClient } from '../src/index.js';
import { ScenarioRun } from './execute.js';
import type { Timing } from './execute.js';
import { scenarioArb, scenarioText } from './scenario.js';
import type { Scenario } from './scenario.js';

/**
 * The search: `workers` loops side by side in this process, each on its own paths of one server,
 * each a series of short fast-check runs (worker i's k-th run has seed `seed + 1000 k + i`). The
 * first to fail stops the others and shrinks; its run's seed and fast-check's replay path are
 * what `--seed N --path P` takes to run that one minimal scenario again, alone.
 */

export interface ExploreOptions {
  readonly seed: number;
  /** fast-check's replay path of a counterexample: replays it (and only it) instead of searching. */
  readonly path?: string;
  /** Stop searching after this long (ms). */
  readonly timeLimitMs: number;
  /** Stop after this many scenarios in all (default: no limit but the time). */
  readonly maxScenarios?: number;
  readonly workers: number;
  readonly timing: Timing;
  /** Wall-clock budget for shrinking a failure: past it, the smallest failure so far is the answer. */
  readonly shrinkMs: number;
  /** The server's port, and an observer client of it (not through any proxy). */
  readonly serverPort: number;
  readonly admin: ZooKeeperClient;
  /** Where scenario paths go (each scenario gets `<root>/<worker>-<n>`). */
  readonly root: string;
  readonly progress?: (text: string) => void;
  /** Makes the run explore another recipe (the explorer's own self-test): defaults to the real one. */
  readonly runScenario?: (scenario: Scenario, root: string) => Promise<{ violations: string[]; log: string[] }>;
}

export interface Failure {
  readonly seed: number;
  readonly path: string;
  readonly scenario: Scenario;
  readonly violations: readonly string[];
  readonly log: readonly string[];
  /** Scenarios run before the first failure, over every worker, and when it came. */
  readonly foundAfter: number;
  readonly foundAtMs: number;
  readonly shrinkRuns: number;
}

export interface ExploreResult {
  readonly scenarios: number;
  readonly elapsedMs: number;
  readonly failure: Failure | undefined;
}

class ScenarioFailed extends Error {}

/** Scenarios per fast-check run of a worker, and how far apart the seeds of a worker's runs are (workers take the seeds in between). */
const CHUNK = 10;
const CHUNK_SEED_STRIDE = 1000;

export async function explore(options: ExploreOptions): Promise<ExploreResult> {
  const started = performance.now();
  let scenarios = 0;
  let firstFailureAt = undefined as { count: number; ms: number } | undefined;
  let last: { violations: string[]; log: string[] } | undefined;
  let shrinkRuns = 0;
  let lastProgress = started;
  const replay = options.path !== undefined;
  const workers = replay ? 1 : options.workers;
  const run =
    options.runScenario ??
    (async (scenario: Scenario, root: string) => {
      const r = new ScenarioRun(scenario, root, options.serverPort, options.admin, options.timing);
      await r.run();
      return { violations: r.violations, log: r.log };
    });

  const runWorker = async (worker: number): Promise<Failure | undefined> => {
    let n = 0;
    let failing = false;
    const property = fc.asyncProperty(scenarioArb, async (scenario) => {
      // Another worker found a failure, or time is up: the rest of this chunk passes at once (not counted).
      if (!failing && (firstFailureAt !== undefined || performance.now() - started > options.timeLimitMs)) return true;
      if (failing && performance.now() - started - firstFailureAt!.ms > options.shrinkMs) return true;
      if (failing) shrinkRuns++;
      else scenarios++;
      const result = await run(scenario, `${options.root}/w${worker}-${n++}`);
      const now = performance.now();
      if (options.progress && now - lastProgress > 30_000) {
        lastProgress = now;
        options.progress(`${scenarios} scenarios in ${Math.round((now - started) / 1000)} s${firstFailureAt ? `, shrinking (${shrinkRuns} runs)` : ''}`);
      }
      if (result.violations.length === 0) return true;
      if (firstFailureAt === undefined) {
        firstFailureAt = { count: scenarios, ms: now - started };
        options.progress?.(`failure after ${scenarios} scenarios (${Math.round(firstFailureAt.ms / 1000)} s); shrinking:\n${scenarioText(scenario)}\n  ${result.violations.join('\n  ')}`);
      }
      failing = true;
      last = result;
      throw new ScenarioFailed(result.violations.join('\n'));
    });
    // Chunks of a few scenarios, each a fast-check run with a seed of its own (the one a replay
    // names): a worker can stop between chunks, which one long fast-check run would not allow.
    for (let chunk = 0; ; chunk++) {
      if (firstFailureAt !== undefined || performance.now() - started > options.timeLimitMs) return undefined;
      if (options.maxScenarios !== undefined && scenarios >= options.maxScenarios) return undefined;
      const seed = replay ? options.seed : options.seed + chunk * CHUNK_SEED_STRIDE + worker;
      const details = await fc.check(property, {
        seed,
        ...(replay ? { path: options.path, endOnFailure: true } : {}),
        numRuns: replay ? 1 : CHUNK,
      });
      if (details.failed && failing && details.counterexample !== null && details.counterexamplePath !== null) {
        return {
          seed,
          path: details.counterexamplePath,
          scenario: details.counterexample[0],
          violations: last?.violations ?? [],
          log: last?.log ?? [],
          ...found(),
          shrinkRuns,
        };
      }
      if (details.failed) throw new Error(`fast-check stopped: ${fc.defaultReportMessage(details) ?? 'failed'}`);
      if (replay) return undefined;
    }
  };

  // Read through a function: TypeScript would keep the narrowing of the loop's first check.
  const found = (): { foundAfter: number; foundAtMs: number } => ({ foundAfter: firstFailureAt?.count ?? scenarios, foundAtMs: firstFailureAt?.ms ?? 0 });
  const results = await Promise.all(Array.from({ length: workers }, (_, i) => runWorker(i)));
  return { scenarios, elapsedMs: performance.now() - started, failure: results.find((r) => r !== undefined) };
}

/** What a failure prints: the minimal schedule, what broke, and the one command that replays it. */
export function failureText(failure: Failure, extraArgs = ''): string {
  return [
    `FAILED after ${failure.foundAfter} scenarios (${(failure.foundAtMs / 1000).toFixed(1)} s); shrunk in ${failure.shrinkRuns} runs to:`,
    scenarioText(failure.scenario),
    'violations:',
    ...failure.violations.map((v) => `  ${v}`),
    'what happened (last run of it):',
    ...failure.log.map((l) => `  ${l}`),
    `replay: npm run explore -- --seed ${failure.seed} --path ${failure.path}${extraArgs}`,
  ].join('\n');
}
