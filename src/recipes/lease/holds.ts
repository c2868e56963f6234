/**
 * How many leases each lock object handed out that have not ended (Curator's
 * isAcquiredInThisProcess): a count, not the leases, so that holding costs nothing per lease
 * beyond its lock's entry here. Kept apart from the lock so that a lease made elsewhere for it (a
 * downgrade's read lease) counts too. A lease ends once: released, handed over, or lost as far
 * as it knows (its monitor: its session's events at once, its node's deletion once its watch,
 * set on the first look at the lease, has answered).
 */
const live = new WeakMap<object, number>();

/** Counts a lease of `lock` from its making (see Lease's constructor) ... */
export function track(lock: object): void {
  live.set(lock, (live.get(lock) ?? 0) + 1);
}

/** ... until it ends (once; also when it ends while it is made: its session already gone). */
export function untrack(lock: object): void {
  live.set(lock, (live.get(lock) ?? 1) - 1);
}

/** Whether a lease of `lock` has not ended, as far as the leases know (see `live`). */
export function heldInProcess(lock: object): boolean {
  return (live.get(lock) ?? 0) > 0;
}
