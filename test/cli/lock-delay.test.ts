import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Mutex } from '../../src/index.js';
import { ROUND_TRIPS_MS, sessionBound } from '../support/bounds.js';
import { eventually } from '../support/wait.js';
import { HOLD, LONG_HOLD_MS, endHolds, readEvents, runCli, startCli, waitForEvents } from './helpers/cli.js';
import { execFixture } from './helpers/exec-fixture.js';

/** CLOCK_MONOTONIC in ms, the clock the hold fixture logs on (see fixtures/hold.mjs). */
const now = (): number => Number(process.hrtime.bigint()) / 1e6;

// These tests run the built CLI: `npm run build` first.
describe('zklock exec --lock-delay', () => {
  // Short ticks so a short session timeout is granted and expires quickly.
  const zk = execFixture('lock-delay', { tickTime: 200, minSessionTimeout: 400 });
  const { contenders } = zk;

  it('after a holder killed with SIGKILL, the next exec runs its command no sooner than --lock-delay after the kill; after its clean release the next one is not delayed', async () => {
    const path = '/cli/lock-delay';
    const lockDelay = 5000;
    // A clean history, so that the first holder below is not delayed itself (a new lock path is 'unknown').
    await (await new Mutex(zk.client, path, { lockDelay }).acquire({ timeout: lockDelay + ROUND_TRIPS_MS })).release();
    const holderLog = join(zk.dir, 'holder.jsonl');
    // A session of 4 s, not less: a busy machine must not lose it before the kill (see lock-loss.test.ts).
    const holder = startCli(['exec', '--lock-delay', '5s', '--session-timeout', '4s', path, '--', process.execPath, HOLD, holderLog, String(LONG_HOLD_MS)], zk.env);
    await waitForEvents(holderLog, 'start');
    const log = join(zk.dir, 'next.jsonl');
    const next = startCli(['exec', '--lock-delay', '5s', '--verbose', path, '--', process.execPath, HOLD, log, '0'], zk.env);
    await eventually(async () => (await contenders(path)).length === 2, ROUND_TRIPS_MS, 'the next exec queued behind the holder');

    // No release, no close: the holder's session lives on until the server expires it.
    const killedAt = now();
    holder.child.kill('SIGKILL');
    // Its command lives on, orphaned, holding nothing: end it.
    endHolds(holderLog);
    assert.equal(await next.exited(sessionBound(4000) + lockDelay + ROUND_TRIPS_MS), 0, next.stderr());
    const [started] = readEvents(log).filter((e) => e.event === 'start');
    assert.ok(started, 'the next command ran');
    // The old node went no sooner than the kill, and the delay counts from when it went: a bound on one clock.
    assert.ok(started.t >= killedAt + lockDelay, `the command started ${(started.t - killedAt).toFixed(0)} ms after the kill (--lock-delay ${lockDelay})`);
    assert.match(next.stderr(), /the last handoff was (unclean|unknown): waited \d+ ms \(--lock-delay\)/);
    assert.deepEqual(await contenders(path), [], 'the next exec released the lock');

    // That release was clean: an exec after it is not delayed.
    const clean = await runCli(['exec', '--lock-delay', '5s', '--verbose', path, '--', process.execPath, '-e', ''], zk.env, ROUND_TRIPS_MS);
    assert.equal(clean.code, 0, clean.stderr);
    assert.match(clean.stderr, /acquired the mutex/);
    assert.doesNotMatch(clean.stderr, /waited \d+ ms \(--lock-delay\)/);
  });

  it('--try with --lock-delay: Ctrl-C while it serves the delay exits 130, does not run the command and leaves no node', async () => {
    const path = '/cli/lock-delay-try';
    const log = join(zk.dir, 'try.jsonl');
    // A lock path never made: nothing proves a clean handoff, so even the free lock waits its delay.
    const run = startCli(['exec', '--try', '--lock-delay', '10m', path, '--', process.execPath, HOLD, log, '0'], zk.env);
    await eventually(async () => (await contenders(path)).length === 1, ROUND_TRIPS_MS, 'holding its node through the delay');
    run.child.kill('SIGINT');
    assert.equal(await run.exited(ROUND_TRIPS_MS), 130, run.stderr());
    assert.match(run.stderr(), /interrupted by SIGINT/);
    assert.deepEqual(readEvents(log), [], 'the command did not run');
    assert.deepEqual(await contenders(path), [], 'no node left');
  });

  it('--lock-delay is a duration of more than 0, for a mutex only (exit 2), and is in --help', async () => {
    for (const [args, message] of [
      [['--lock-delay', '0'], /more than 0/],
      [['--lock-delay', 'soon'], /expected a duration/],
      [['--lock-delay', '1s', '--read'], /--lock-delay is for a mutex/],
      [['--lock-delay', '1s', '--limit', '2'], /--lock-delay is for a mutex/],
    ] as const) {
      const result = await runCli(['exec', ...args, '/cli/lock-delay-usage', '--', process.execPath, '-e', ''], zk.env);
      assert.equal(result.code, 2, `zklock exec ${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, message);
    }
    assert.deepEqual(await contenders('/cli/lock-delay-usage'), [], 'nothing was acquired');
    const help = await runCli(['exec', '--help']);
    assert.match(help.stdout, /--lock-delay <duration>/);
  });
});
