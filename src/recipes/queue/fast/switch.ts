/**
 * The one switch of the queue's fast paths (sequence-proof.ts, queue-lookahead.ts,
 * release-record.ts). Off, every lock kind runs the plain algorithm only:
 * create, list, watch the nearest blocker, check. The fast paths only ever conclude sooner what
 * the plain queue concludes, so turning them off must change no outcome, only the requests sent:
 * `npm test` runs the fault suite over every lock kind once with them on and once off
 * (scripts/run-tests.mjs --fast-paths-off), so that a fast path can never become load-bearing.
 *
 * Read once, when the module loads, from the environment: ZKLOCK_FAST_PATHS=off turns them off.
 * Not a lock option: nothing but a test or a suspicion of a fast path is a reason to turn them off.
 */
let on = process.env.ZKLOCK_FAST_PATHS?.toLowerCase() !== 'off';

/** Whether the fast paths run. Read at each decision, so that a test may turn them off between acquires. */
export function fastPaths(): boolean {
  return on;
}

/** For tests: turns the fast paths on or off for the acquires that start from now on; returns the previous setting. */
export function setFastPaths(enabled: boolean): boolean {
  const was = on;
  on = enabled;
  return was;
}
