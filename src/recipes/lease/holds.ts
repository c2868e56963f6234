import type { Lease, ReleaseHooks } from './lease.js';

/**
 * How many leases each lock object handed out that have not ended (Curator's
 * isAcquiredInThisProcess): a count, not the leases, so that holding costs one small hook per
 * lease and nothing per lock. Kept apart from the lock so that a lease made elsewhere for it (a
 * downgrade's read lease) counts too. A lease ends once: released, handed over, or lost as far
 * as it knows (its monitor: its session's events at once, its node's deletion once its watch,
 * set on the first look at the lease, has answered).
 */
const live = new WeakMap<object, number>();

/** Makes a lease of `lock`, counted until it ends (also when it ends while it is made: its session already gone). */
export function tracked(lock: object, make: (hooks: Pick<ReleaseHooks, 'ended'>) => Lease): Lease {
  const ended = (): void => {
    live.set(lock, (live.get(lock) ?? 1) - 1);
  };
  live.set(lock, (live.get(lock) ?? 0) + 1);
  try {
    return make({ ended });
  } catch (error) {
    ended();
    throw error;
  }
}

/** Whether a lease of `lock` has not ended, as far as the leases know (see `live`). */
export function heldInProcess(lock: object): boolean {
  return (live.get(lock) ?? 0) > 0;
}
