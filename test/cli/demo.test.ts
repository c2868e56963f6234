import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runCli } from './helpers/cli.js';

describe('zklock demo', () => {
  it('runs to completion by itself, with every check passing, in under a minute', { timeout: 90_000 }, async () => {
    const started = Date.now();
    const result = await runCli(['demo'], {}, 85_000);
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    assert.match(result.stdout, /killed the ensemble leader/);
    assert.match(result.stdout, /all checks passed/);
    assert.doesNotMatch(result.stdout, /FAIL/);
    assert.ok(Date.now() - started < 60_000, `took ${Date.now() - started} ms`);
  });
});
