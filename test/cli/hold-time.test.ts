import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { Mutex } from '../../src/index.js';
import { LOAD_SLACK_MS, ROUND_TRIPS_MS } from '../support/bounds.js';
import { eventually } from '../support/wait.js';
import { HOLD, LONG_HOLD_MS, endHolds, runCli, startCli, waitForEvents } from './helpers/cli.js';
import { execFixture } from './helpers/exec-fixture.js';

/** How long the exec waits in the queue: a wait that, counted as a hold, no hold this short could show. */
const WAIT_MS = 3000;

interface Row {
  owner: { id: string };
  ageMs: number;
  heldForMs?: number;
  heldExact?: boolean;
}

async function statusJson(env: NodeJS.ProcessEnv): Promise<{ holders: Row[]; waiters: Row[] }> {
  const result = await runCli(['status', '--json', '/cli/hold/lock'], env);
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout) as { holders: Row[]; waiters: Row[] };
}

describe('zklock shows a holder\'s hold apart from its wait', () => {
  const fx = execFixture('hold-time');

  it('status, status --json and ls date a hold from what the server records, never from when the holder queued', async () => {
    const first = await new Mutex(fx.client, '/cli/hold/lock', { ownerId: 'first' }).acquire({ timeout: ROUND_TRIPS_MS });
    // Alone and unchanged since it queued: it has held since then, exactly.
    const alone = (await statusJson(fx.env)).holders[0]!;
    assert.equal(alone.heldExact, true);
    assert.equal(alone.heldForMs, alone.ageMs);

    const log = join(fx.dir, 'hold.jsonl');
    const run = startCli(['exec', '--owner', 'second', '/cli/hold/lock', '--', process.execPath, HOLD, log, String(LONG_HOLD_MS)], fx.env);
    await eventually(async () => (await fx.contenders('/cli/hold/lock')).length === 2, ROUND_TRIPS_MS, 'the exec queued');
    const queuedBy = Date.now();
    // A newcomer changed the queue after the first queued: its hold is now only bounded (at least since the newcomer came).
    const bounded = (await statusJson(fx.env)).holders[0]!;
    assert.equal(bounded.owner.id, 'first');
    assert.equal(bounded.heldExact, false);
    assert.ok(bounded.heldForMs! <= Date.now() - queuedBy + LOAD_SLACK_MS && bounded.heldForMs! <= bounded.ageMs, JSON.stringify(bounded));

    // Time passing is what is measured here: the exec's wait.
    await sleep(WAIT_MS);
    const released = Date.now();
    await first.release();
    await waitForEvents(log, 'start');

    const [json, text, ls] = await Promise.all([statusJson(fx.env), runCli(['status', '/cli/hold/lock'], fx.env), runCli(['ls', '--json', '/cli/hold'], fx.env)]);
    const since = Date.now() - released;
    const holder = json.holders[0]!;
    assert.equal(holder.owner.id, 'second');
    assert.ok(holder.ageMs >= WAIT_MS, `queued for its wait and more: ${JSON.stringify(holder)}`);
    // Dated by its own mark of having acquired (its node's mtime): at most since the release, never its wait.
    assert.ok(holder.heldForMs !== undefined && holder.heldForMs <= since, `held ${holder.heldForMs} ms, released ${since} ms ago`);
    assert.equal(holder.heldExact, false);
    assert.match(text.stdout, /^ROLE\s+OWNER\s+HOLDING\s+QUEUED\s+FENCING TOKEN\s+KIND\s+NODE$/m);
    const row = /^holder\s+second\s+≥ (\S+)\s+(\S+)\s/m.exec(text.stdout);
    assert.ok(row, text.stdout);
    assert.ok(seconds(row[1]!) < seconds(row[2]!) && seconds(row[2]!) >= WAIT_MS / 1000, text.stdout);
    const summary = (JSON.parse(ls.stdout) as { lockPath: string; holding: string; heldForMs?: number }[]).find((l) => l.lockPath === '/cli/hold/lock');
    assert.ok(summary?.heldForMs !== undefined && summary.heldForMs <= since, ls.stdout);
    assert.match(summary.holding, /^≥ /);

    endHolds(log);
    assert.equal(await run.exited(), 0, run.stderr());
  });
});

/** formatAge's text back in seconds: `850ms`, `12s`, `3m04s`. */
function seconds(text: string): number {
  const match = /^(?:(\d+)m)?(\d+)(ms|s)$/.exec(text);
  assert.ok(match, `not an age: ${text}`);
  return match[3] === 'ms' ? Number(match[2]) / 1000 : Number(match[1] ?? 0) * 60 + Number(match[2]);
}
