/**
 * `npm run chaos:follower -- --trials 50`: the lease's promise through a frozen follower, measured.
 * A 3-member ensemble (tickTime 500 ms, syncLimit 5); each trial freezes the holder's follower at
 * a different phase against its pings and heartbeats (see follower-freeze.ts). Prints every trial
 * and the margin's distribution; exits 1 if any trial had two holders at once.
 */
import { parseArgs } from 'node:util';
import { ZooKeeperEnsemble } from '../src/testing/index.js';
import { followerFreezeTrial } from './follower-freeze.js';
import type { TrialResult } from './follower-freeze.js';

const { values } = parseArgs({
  options: {
    trials: { type: 'string', default: '50' },
    'session-timeout': { type: 'string', default: '4000' },
    'tick-time': { type: 'string', default: '500' },
    /** Freeze phases are spread evenly over [from, to) ms after the acquire. */
    'freeze-from': { type: 'string', default: '0' },
    'freeze-to': { type: 'string' },
  },
});
const trials = Number(values.trials);
const sessionTimeout = Number(values['session-timeout']);
const tickTime = Number(values['tick-time']);
// By default one and a half session timeouts: past the first idle pings (every third of the timeout) and several heartbeats.
const freezeFrom = Number(values['freeze-from']);
const freezeTo = Number(values['freeze-to'] ?? 1.5 * sessionTimeout);

const ensemble = await ZooKeeperEnsemble.start({ size: 3, tickTime });
const results: TrialResult[] = [];
try {
  for (let i = 0; i < trials; i++) {
    const freezeAfter = Math.round(freezeFrom + (i / trials) * (freezeTo - freezeFrom));
    const result = await followerFreezeTrial(ensemble, { sessionTimeout, freezeAfter, lockPath: `/follower-trials/${i}` });
    results.push(result);
    console.log(
      `trial ${String(i + 1).padStart(3)}: freeze +${freezeAfter} ms, signal +${result.signalAfterFreezeMs.toFixed(0)} ms (${result.reason}), ` +
        `other holder +${result.acquiredAfterFreezeMs.toFixed(0)} ms, margin ${result.marginMs.toFixed(0)} ms`,
    );
  }
} finally {
  await ensemble.close();
}

const margins = results.map((r) => r.marginMs).sort((a, b) => a - b);
const at = (q: number): number => margins[Math.min(margins.length - 1, Math.floor(q * margins.length))]!;
const unsafe = margins.filter((m) => !(m > 0)).length;
console.log(
  `\n${results.length} trials, session timeout ${results[0]?.negotiatedTimeout ?? sessionTimeout} ms, tickTime ${tickTime} ms: ` +
    `${results.length - unsafe} safe, ${unsafe} with two holders; margin ms min ${at(0).toFixed(0)}, p10 ${at(0.1).toFixed(0)}, ` +
    `median ${at(0.5).toFixed(0)}, p90 ${at(0.9).toFixed(0)}, max ${at(1).toFixed(0)}`,
);
process.exitCode = unsafe > 0 ? 1 : 0;
