import type { Lease, ReleaseHooks } from './lease.js';

/**
 * The leases each lock object handed out that have neither been released nor been seen lost
 * (Curator's isAcquiredInThisProcess). Kept apart from the lock so that a lease made elsewhere
 * for it (a downgrade's read lease) counts too. A lease leaves the set when it ends: released,
 * handed over, or lost as far as it knows (see heldInProcess).
 */
const holds = new WeakMap<object, Set<Lease>>();

/** Makes a lease of `lock` with the hook that lists it until it ends. */
export function tracked(lock: object, make: (hooks: Pick<ReleaseHooks, 'ended'>) => Lease): Lease {
  let leases = holds.get(lock);
  if (!leases) holds.set(lock, (leases = new Set()));
  const set = leases;
  // A lease can end while it is made (its session already gone): it is then never listed.
  const made: { lease?: Lease; ended: boolean } = { ended: false };
  const lease = make({
    ended: () => {
      made.ended = true;
      if (made.lease) set.delete(made.lease);
    },
  });
  made.lease = lease;
  if (!made.ended) set.add(lease);
  return lease;
}

/**
 * Whether some lease of `lock` is held, as far as the leases know: each knows of a loss from its
 * session's events at once, and of its node's deletion from its node watch, which is set the
 * first time anyone looks at the lease (its `signal`, `held`, or this call) and answers a round
 * trip later. So the first call after a deletion nobody had looked for answers true; the next
 * ones, once the watch's reply is in, false.
 */
export function heldInProcess(lock: object): boolean {
  for (const lease of holds.get(lock) ?? []) if (lease.held) return true;
  return false;
}
