import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { describe, it } from 'node:test';
import type { ZooKeeperClient } from '../../src/index.js';
import type { Violation } from '../../explore/execute.js';
import { DEFAULT_TIMING } from '../../explore/execute.js';
import { explore } from '../../explore/explorer.js';
import type { ExploreOptions } from '../../explore/explorer.js';
import type { Scenario } from '../../explore/scenario.js';

/**
 * The replay (`--seed S --path P`) runs the one scenario the shrink printed, and only it. No
 * server: the scenarios are judged by a stand-in for ScenarioRun, so the search, its shrink and
 * the replay are deterministic here.
 */

/** A scenario fails when its waits add up to 300 ms: a shrink ends mid-stream, with later siblings that fail too. */
const fails = (scenario: Scenario): { violations: Violation[]; log: string[] } => {
  const waited = scenario.steps.reduce((sum, step) => sum + (step.op === 'wait' ? step.ms : 0), 0);
  return { violations: waited >= 300 ? [{ kind: 'two-holders', text: `waits of ${waited} ms` }] : [], log: [] };
};

const base: Omit<ExploreOptions, 'seed' | 'runScenario'> = {
  timeLimitMs: 30_000,
  workers: 1,
  timing: DEFAULT_TIMING,
  shrinkMs: 30_000,
  serverPort: 0,
  // Not used: runScenario replaces every run on the server.
  admin: {} as ZooKeeperClient,
  root: '/unused',
};

describe('explorer replay', () => {
  it('runs exactly the shrunk scenario it printed, not a sibling of it in the shrink, when that scenario passes this time', async () => {
    // Seed 1: the shrink's last step is the third candidate of its parent, whose fourth (a reply
    // delay more, the same waits) fails too: the unfixed replay reported that one.
    const search = await explore({ ...base, seed: 1, runScenario: (s) => Promise.resolve(fails(s)) });
    const failure = search.failure;
    assert.ok(failure, 'the search failed');
    assert.ok(failure.path.includes(':'), `shrunk (path ${failure.path})`);
    assert.equal(failure.scenario.steps.filter((step) => step.op === 'wait').length, 1);

    // Replayed alone, every scenario but the printed one still fails: the printed one passes this
    // time, as a timing-dependent failure may. The replay must say so, not report another scenario
    // (fast-check goes on through the later siblings of a shrunk path: seen failing before the fix).
    const ran: Scenario[] = [];
    const replay = await explore({
      ...base,
      seed: failure.seed,
      path: failure.path,
      runScenario: (s) => {
        ran.push(s);
        return Promise.resolve(isDeepStrictEqual(s, failure.scenario) ? { violations: [], log: [] } : fails(s));
      },
    });
    assert.deepEqual(ran, [failure.scenario], 'the replay ran the printed scenario, once, and nothing else');
    assert.equal(replay.failure, undefined);

    // And when it fails, the replay's failure is that scenario.
    const again = await explore({ ...base, seed: failure.seed, path: failure.path, runScenario: (s) => Promise.resolve(fails(s)) });
    assert.deepEqual(again.failure?.scenario, failure.scenario);
  });
});
