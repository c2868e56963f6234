import type { Lease, ReleaseHooks } from './lease.js';

/**
 * The leases each lock object handed out that their holders have not released yet (Curator's
 * isAcquiredInThisProcess). Kept apart from the lock so that a lease made elsewhere for it (a
 * downgrade's read lease) counts too. A lease leaves the set when released, not when lost: the
 * lock learns of a loss only by looking, and looking sets a watch an uncontended cycle does not
 * pay for; a lost lease still listed is simply not `held`.
 */
const holds = new WeakMap<object, Set<Lease>>();

/** Makes a lease of `lock` with the hook that lists it until its holder releases it. */
export function tracked(lock: object, make: (hooks: Pick<ReleaseHooks, 'ended'>) => Lease): Lease {
  let leases = holds.get(lock);
  if (!leases) holds.set(lock, (leases = new Set()));
  const set = leases;
  const lease: Lease = make({ ended: () => set.delete(lease) });
  set.add(lease);
  return lease;
}

/** Whether some lease of `lock` is held: released by nobody, lost to nothing (asks each lease, which sets its node watch once). */
export function heldInProcess(lock: object): boolean {
  for (const lease of holds.get(lock) ?? []) if (lease.held) return true;
  return false;
}
