import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isProcessAlive } from '../../src/testing/index.js';
import { LOAD_SLACK_MS, ROUND_TRIPS_MS } from '../support/bounds.js';
import { eventually } from '../support/wait.js';
import { HOLD, LONG_HOLD_MS, endHolds, readEvents, runCli, startCli, waitForEvents } from './helpers/cli.js';
import { execFixture } from './helpers/exec-fixture.js';

/**
 * The --max-hold of the runs that overrun it. The command (a node process) must be running with
 * its signal handlers in place before then: a SIGTERM sooner ends it before it logs its start.
 * With 1 s (and 500 ms) a starved machine did not start it in time (2 runs of 3 side by side).
 */
const MAX_HOLD_MS = LOAD_SLACK_MS;

// These tests run the built CLI: `npm run build` first.
describe('zklock exec --max-hold', () => {
  const zk = execFixture('max-hold');
  const { contenders } = zk;

  it('terminates a command that holds the lock too long (SIGTERM, then SIGKILL after --grace), releases the lock and exits 124', async () => {
    const path = '/cli/max-hold';
    const log = join(zk.dir, 'overrun.jsonl');
    const run = startCli(['exec', '--max-hold', `${MAX_HOLD_MS}ms`, '--grace', '500ms', path, '--', process.execPath, HOLD, log, String(LONG_HOLD_MS), '--ignore-term'], zk.env);
    const [started] = await waitForEvents(log, 'start');
    assert.equal((await contenders(path)).length, 1, 'the command runs holding the lock');
    assert.equal(await run.exited(MAX_HOLD_MS + ROUND_TRIPS_MS), 124, run.stderr());
    assert.match(run.stderr(), new RegExp(`held the lock /cli/max-hold past --max-hold \\(${MAX_HOLD_MS} ms\\); stopping the command`));
    assert.deepEqual(readEvents(log).filter((e) => e.event === 'signal').map((e) => e.signal), ['SIGTERM'], 'SIGTERM first (ignored here), then SIGKILL');
    assert.equal(readEvents(log).some((e) => e.event === 'end'), false, 'the command did not run to its end');
    assert.equal(await isProcessAlive(started!.pid), false, 'the command is gone');
    assert.deepEqual(await contenders(path), [], 'the lock node is gone');
  });

  it('a command that finishes within --max-hold exits with its own code', async () => {
    const path = '/cli/max-hold-in-time';
    const result = await runCli(['exec', '--max-hold', '10m', path, '--', process.execPath, '-e', 'process.exit(3)'], zk.env, ROUND_TRIPS_MS);
    assert.equal(result.code, 3, result.stderr);
    assert.doesNotMatch(result.stderr, /max-hold/);
    assert.deepEqual(await contenders(path), []);
  });

  it('--force-release-after frees the lock even while the command has not exited, and --try takes the bound too', async () => {
    const path = '/cli/force-release';
    const log = join(zk.dir, 'stuck.jsonl');
    // A grace far longer than the test: only the forced release can free the lock in time.
    const run = startCli(['exec', '--try', '--max-hold', `${MAX_HOLD_MS}ms`, '--force-release-after', '500ms', '--grace', '10m', path, '--', process.execPath, HOLD, log, String(LONG_HOLD_MS), '--ignore-term'], zk.env);
    const [started] = await waitForEvents(log, 'start');
    await waitForEvents(log, 'signal', 1, MAX_HOLD_MS + ROUND_TRIPS_MS);
    await eventually(async () => (await contenders(path)).length === 0, ROUND_TRIPS_MS, 'the lock node was deleted by the holder\'s own client');
    assert.equal(await isProcessAlive(started!.pid), true, 'the command is still running');
    const next = await runCli(['exec', '--try', path, '--', 'true'], zk.env, ROUND_TRIPS_MS);
    assert.equal(next.code, 0, `another run gets the lock: ${next.stderr}`);
    endHolds(log);
    assert.equal(await run.exited(ROUND_TRIPS_MS), 124, run.stderr());
    assert.deepEqual(await contenders(path), []);
  });

  it('--force-release-after without --max-hold is a usage error (exit 2); so is a zero --max-hold', async () => {
    const cases: [string[], RegExp][] = [
      [['--force-release-after', '1s'], /--force-release-after counts from the end of --max-hold: give both/],
      [['--max-hold', '0'], /--max-hold <duration>.*expected a duration of more than 0, got "0"/],
    ];
    for (const [flags, message] of cases) {
      const result = await runCli(['exec', ...flags, '/cli/max-hold-usage', '--', 'true'], zk.env, ROUND_TRIPS_MS);
      assert.equal(result.code, 2, `${flags.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, message, 'refused for what it is, not as an unknown option');
    }
    assert.equal(await zk.client.exists('/cli/max-hold-usage'), null, 'nothing was created');
  });

  it('--max-hold and --force-release-after take bounds beyond a timer\'s 596h (the library chains timers)', async () => {
    const path = '/cli/max-hold-long';
    const result = await runCli(['exec', '--max-hold', '720h', '--force-release-after', '700h', path, '--', process.execPath, '-e', 'process.exit(5)'], zk.env, ROUND_TRIPS_MS);
    assert.equal(result.code, 5, result.stderr);
    assert.deepEqual(await contenders(path), []);
  });
});
