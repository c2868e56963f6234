import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ROUND_TRIPS_MS, harnessBound } from '../support/bounds.js';
import { runCli } from './helpers/cli.js';

/**
 * The demo's own bounds: its ensemble's start and stop, and its workers' hard stop (their 16 s
 * run, stretched by up to a third after the failover, plus 40 s). How long it takes on an idle
 * machine is not a test's business.
 */
const DEMO_BOUND_MS = harnessBound(1, 1) + (16_000 * 4) / 3 + 40_000;

describe('zklock demo', () => {
  it('runs to completion by itself, with every check passing', { timeout: DEMO_BOUND_MS + ROUND_TRIPS_MS }, async () => {
    const result = await runCli(['demo'], {}, DEMO_BOUND_MS);
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    assert.match(result.stdout, /killed the ensemble leader/);
    assert.match(result.stdout, /all checks passed/);
    assert.doesNotMatch(result.stdout, /FAIL/);
  });
});
