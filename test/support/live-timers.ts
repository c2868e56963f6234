import { createHook } from 'node:async_hooks';

/**
 * The timers alive in this process, seen from outside the library: every Timeout created since
 * `watchTimers()` that has neither fired nor been cleared, with its delay and whether it keeps
 * the process alive. process.getActiveResourcesInfo() cannot tell: it counts only the timers
 * that keep the process alive, and the library's are unref'd. Tests use delays no other timer
 * has, to tell theirs apart.
 */
export function watchTimers(): { live: (delayAtMost: number, delayAtLeast: number) => { delay: number; ref: boolean }[]; stop: () => void } {
  const timers: NodeJS.Timeout[] = [];
  const hook = createHook({
    init(_id, type, _trigger, resource) {
      if (type === 'Timeout') timers.push(resource as NodeJS.Timeout);
    },
  }).enable();
  return {
    live: (delayAtMost, delayAtLeast) =>
      timers
        .map((timer) => timer as unknown as { _idleTimeout: number; _destroyed: boolean; hasRef(): boolean })
        .filter((timer) => !timer._destroyed && timer._idleTimeout <= delayAtMost && timer._idleTimeout >= delayAtLeast)
        .map((timer) => ({ delay: timer._idleTimeout, ref: timer.hasRef() })),
    stop: () => hook.disable(),
  };
}
