import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import type { RunSummary } from '../../chaos/report.js';
import { ROUND_TRIPS_MS, harnessBound } from '../support/bounds.js';

const RUNNER = fileURLToPath(new URL('../../chaos/run.ts', import.meta.url));
// 50 s of chaos (about a minute in all on an idle machine), between an ensemble start and a wait
// for its quorum, each bounded by the harness, and the final checks. Seed 22 with these kinds and
// gaps deals a freeze of a follower for 5.5 s (past the session timeout), then a follower cut from
// its leader; each waits up to 10 s for a worker pinned there to be mid-hold. The cut starts by
// about the 40th second even when both waits run out, so both faults fit; a third may not.
const DURATION_S = 50;
const SEED = '22';
const KINDS = 'freeze-member,isolate-follower-from-leader,pause-worker';
const GAP = '1-1.5';
const KILL_AFTER_MS = DURATION_S * 1000 + harnessBound(2, 1) + ROUND_TRIPS_MS;

describe('chaos run (short, fixed seed)', () => {
  it('finds no fencing violation, no unexcused overlap, no lease signalled late and no leaked node, with a frozen member and a follower cut from its leader', { timeout: KILL_AFTER_MS + ROUND_TRIPS_MS }, async () => {
    const out = mkdtempSync(join(tmpdir(), 'zklock-chaos-'));
    try {
      const child = spawn(process.execPath, ['--import', 'tsx', RUNNER, '--duration', String(DURATION_S), '--seed', SEED, '--kinds', KINDS, '--gap', GAP, '--out', out], { stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      // The runner kills its workers on SIGINT; the harness's watchdog then removes its servers.
      const timer = setTimeout(() => child.kill('SIGINT'), KILL_AFTER_MS);
      const [code] = (await once(child, 'exit')) as [number | null];
      clearTimeout(timer);
      assert.equal(code, 0, output);
      const summary = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as RunSummary;
      assert.deepEqual(summary.check.fencingViolations, [], output);
      assert.equal(summary.check.unexcusedOverlaps, 0, output);
      assert.equal(summary.check.lostLeaseViolations, 0, output);
      assert.deepEqual(summary.check.leakedNodes, [], output);
      assert.ok(summary.check.semaphoreMax.unexcused <= summary.check.semaphoreMax.bound, output);
      assert.ok(summary.check.accepted > 100, `only ${summary.check.accepted} accepted operations\n${output}`);
      for (const kind of ['freeze-member', 'isolate-follower-from-leader']) assert.ok((summary.faultsByKind[kind] ?? 0) >= 1, `no ${kind}: ${JSON.stringify(summary.faultsByKind)}`);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
