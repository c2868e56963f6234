import fc from 'fast-check';
import type { ZooKeeperClient } from '../src/index.js';
import { ScenarioRun } from './execute.js';
import type { LockFactory, Timing, Violation, ViolationKind } from './execute.js';
import { scenarioArb, scenarioArbitrary, scenarioText } from './scenario.js';
import type { ZooKeeperEnsemble } from '../src/testing/index.js';
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
  /** An ensemble (`serverPort` one of its members): scenarios then include member faults, and run one at a time (a member fault is every scenario's). */
  readonly ensemble?: ZooKeeperEnsemble;
  readonly admin: ZooKeeperClient;
  /** Where scenario paths go (each scenario gets `<root>/<worker>-<n>`). */
  readonly root: string;
  readonly progress?: (text: string) => void;
  /** Violations whose text matches one of these are not failures (known defects, to look past them). */
  readonly ignore?: readonly RegExp[];
  /** Runs of a replayed scenario, and of each candidate while shrinking: one that fails is a failure (default 1). */
  readonly repeat?: number;
  /** Only violations of this kind are failures (to shrink a replay to one invariant of several it broke). */
  readonly onlyKind?: ViolationKind;
  /** Do not stop at a failure: note the first scenario of every new signature (see {@link signatureOf}) and go on, unshrunk. */
  readonly keepGoing?: boolean;
  /** On a replay (`path`), shrink from there instead of running that one scenario. */
  readonly shrinkReplay?: boolean;
  /** Makes the actors' locks instead of the recipes (the explorer's own self-test: a lock broken on purpose). */
  readonly lockFactory?: LockFactory;
  /** Runs a scenario instead of {@link ScenarioRun} (the search's own tests: a verdict that needs no server). */
  readonly runScenario?: (scenario: Scenario, root: string) => Promise<{ violations: Violation[]; log: string[] }>;
}

export interface Failure {
  readonly seed: number;
  readonly path: string;
  readonly scenario: Scenario;
  /** The scenario as first found, before shrinking. */
  readonly original: Scenario;
  readonly violations: readonly Violation[];
  readonly log: readonly string[];
  /** Scenarios run before the first failure, over every worker, and when it came. */
  readonly foundAfter: number;
  readonly foundAtMs: number;
  readonly shrinkRuns: number;
}

/** A failure noted by a `keepGoing` search: the first scenario with a new signature. */
export interface Sighting {
  readonly signature: string;
  readonly seed: number;
  readonly path: string;
  readonly scenario: Scenario;
  readonly violation: Violation;
  readonly foundAfter: number;
  readonly foundAtMs: number;
}

export interface ExploreResult {
  readonly scenarios: number;
  readonly elapsedMs: number;
  readonly failure: Failure | undefined;
  readonly sightings: readonly Sighting[];
}

/** What tells two failures apart in a keep-going search: the invariant, the lock family, and an error code it names. */
export function signatureOf(violation: Violation, scenario: Scenario): string {
  const code = /rejected with \S+ ([A-Z_]+)/.exec(violation.text)?.[1];
  return [violation.kind, scenario.family, code].filter(Boolean).join('/');
}

class ScenarioFailed extends Error {}

/** Scenarios per fast-check run of a worker, and how far apart the seeds of a worker's runs are (workers take the seeds in between). */
const CHUNK = 10;
const CHUNK_SEED_STRIDE = 1000;

export async function explore(options: ExploreOptions): Promise<ExploreResult> {
  const started = performance.now();
  let scenarios = 0;
  let firstFailureAt = undefined as { count: number; ms: number } | undefined;
  let last: { violations: Violation[]; log: string[] } | undefined;
  /** The kind of the first failure: shrinking looks for a smaller scenario that breaks the same invariant. */
  let kind: ViolationKind | undefined;
  let original: Scenario | undefined;
  let shrinkRuns = 0;
  let lastProgress = started;
  const replay = options.path !== undefined;
  const sightings = new Map<string, Sighting>();
  const workers = replay || options.ensemble ? 1 : options.workers;
  const run = async (scenario: Scenario, root: string): Promise<{ violations: Violation[]; log: string[] }> => {
    if (options.runScenario) return options.runScenario(scenario, root);
    const r = new ScenarioRun(scenario, root, options.serverPort, options.admin, options.timing, options.lockFactory, options.ensemble);
    await r.run();
    return { violations: r.violations, log: r.log };
  };

  const runWorker = async (worker: number): Promise<Failure | undefined> => {
    let n = 0;
    let failing = false;
    let seed = options.seed;
    let index = 0;
    const property = fc.asyncProperty(options.ensemble ? scenarioArbitrary(true) : scenarioArb, async (scenario) => {
      const runIndex = index++;
      // A replay runs the one scenario its path names. fast-check does not stop there: for a path
      // of several segments (a shrunk failure) it goes on through the siblings that follow in the
      // last shrink's stream (numRuns does not bound a replay with a path), and when the named
      // scenario passed this time (timing) the first sibling that failed was reported as the
      // replay, a smaller scenario than the one printed. Those are not run.
      if (replay && !options.shrinkReplay && runIndex > 0) return true;
      // Another worker found a failure, or time is up: the rest of this chunk passes at once (not counted).
      if (!failing && (firstFailureAt !== undefined || performance.now() - started > options.timeLimitMs)) return true;
      if (failing && performance.now() - started - firstFailureAt!.ms > options.shrinkMs) return true;
      if (failing) shrinkRuns++;
      else scenarios++;
      // A replayed or shrunk scenario runs up to `repeat` times: timing (the load, a stall of a
      // scenario beside it in the search) decides some failures, and one failing run is a failure.
      let result: { violations: Violation[]; log: string[] } = { violations: [], log: [] };
      const attempts = replay || failing ? (options.repeat ?? 1) : 1;
      for (let attempt = 0; attempt < attempts && result.violations.length === 0; attempt++) {
        const raw = await run(scenario, `${options.root}/w${worker}-${n++}`);
        const relevant = raw.violations.filter((v) => !options.ignore?.some((r) => r.test(v.text)) && (options.onlyKind === undefined || v.kind === options.onlyKind) && (kind === undefined || v.kind === kind));
        result = { log: raw.log, violations: relevant };
      }
      const now = performance.now();
      if (options.keepGoing) {
        for (const violation of result.violations) {
          const signature = signatureOf(violation, scenario);
          if (sightings.has(signature)) continue;
          sightings.set(signature, { signature, seed, path: String(runIndex), scenario, violation, foundAfter: scenarios, foundAtMs: now - started });
          options.progress?.(`new failure ${signature} after ${scenarios} scenarios (${Math.round((now - started) / 1000)} s): ${violation.text}\n  replay: --seed ${seed} --path ${runIndex}`);
        }
        return true;
      }
      if (options.progress && now - lastProgress > 30_000) {
        lastProgress = now;
        options.progress(`${scenarios} scenarios in ${Math.round((now - started) / 1000)} s${firstFailureAt ? `, shrinking (${shrinkRuns} runs)` : ''}`);
      }
      if (firstFailureAt === undefined && result.violations.length > 0) {
        firstFailureAt = { count: scenarios, ms: now - started };
        kind = result.violations[0]!.kind;
        original = scenario;
        options.progress?.(`failure after ${scenarios} scenarios (${Math.round(firstFailureAt.ms / 1000)} s); shrinking:\n${scenarioText(scenario)}\n  ${result.violations.map((v) => v.text).join('\n  ')}`);
      } else if (!failing || !result.violations.some((v) => v.kind === kind)) {
        return true;
      }
      failing = true;
      last = result;
      throw new ScenarioFailed(result.violations.map((v) => v.text).join('\n'));
    });
    // Chunks of a few scenarios, each a fast-check run with a seed of its own (the one a replay
    // names): a worker can stop between chunks, which one long fast-check run would not allow.
    for (let chunk = 0; ; chunk++) {
      if (firstFailureAt !== undefined || performance.now() - started > options.timeLimitMs) return undefined;
      if (options.maxScenarios !== undefined && scenarios >= options.maxScenarios) return undefined;
      seed = replay ? options.seed : options.seed + chunk * CHUNK_SEED_STRIDE + worker;
      index = 0;
      const details = await fc.check(property, {
        seed,
        ...(replay ? { path: options.path, endOnFailure: !options.shrinkReplay } : {}),
        numRuns: replay ? 1 : CHUNK,
      });
      if (details.failed && failing && details.counterexample !== null && details.counterexamplePath !== null) {
        return {
          seed,
          path: details.counterexamplePath,
          scenario: details.counterexample[0],
          original: original ?? details.counterexample[0],
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
  return { scenarios, elapsedMs: performance.now() - started, failure: results.find((r) => r !== undefined), sightings: [...sightings.values()] };
}

/** What a failure prints: the minimal schedule, what broke, and the one command that replays it. */
export function failureText(failure: Failure, extraArgs = ''): string {
  return [
    `FAILED after ${failure.foundAfter} scenarios (${(failure.foundAtMs / 1000).toFixed(1)} s); shrunk in ${failure.shrinkRuns} runs to:`,
    scenarioText(failure.scenario),
    'violations:',
    ...failure.violations.map((v) => `  ${v.kind}: ${v.text}`),
    'what happened (last run of it):',
    ...failure.log.map((l) => `  ${l}`),
    `replay: npm run explore -- --seed ${failure.seed} --path ${failure.path}${extraArgs}`,
  ].join('\n');
}
