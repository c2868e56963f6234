import { performance } from 'node:perf_hooks';
import { MAX_TIMER_MS } from '../../client/durations.js';

/**
 * Runs `fn` once at `endAt` (a performance.now() time), however far off: setTimeout fires at once
 * beyond MAX_TIMER_MS, so a longer wait is a chain of timers toward the same end. A timer may fire
 * a little before its time by performance.now() (Node rounds to whole ms): it is then set again
 * for what is left, so `fn` never runs early. `unref`: the wait does not keep the process alive.
 * Returns what cancels it.
 */
export function timerAt(endAt: number, fn: () => void, unref = false): () => void {
  let timer: NodeJS.Timeout;
  const schedule = (left: number): void => {
    timer = setTimeout(tick, Math.min(Math.ceil(left), MAX_TIMER_MS));
    if (unref) timer.unref();
  };
  const tick = (): void => {
    const left = endAt - performance.now();
    if (left > 0) schedule(left);
    else fn();
  };
  schedule(Math.max(0, endAt - performance.now()));
  return () => clearTimeout(timer);
}
