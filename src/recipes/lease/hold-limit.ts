import { performance } from 'node:perf_hooks';
import { LockError } from '../support/lock-error.js';

/**
 * Starts a lease's hold clock. A symbol the package does not export: only the locks bound a hold,
 * from options checkHoldOptions accepted, as they hand the lease out (never a lease already ended).
 */
export const limitHold: unique symbol = Symbol('limitHold');

/** A bound on how long a lease may be held (Curator's CURATOR-28): see Lease.holdLimit. */
export interface HoldOptions {
  /**
   * The lease's `signal` aborts with a LockLostError `HOLD_EXPIRED` once it has been held this
   * many ms (from when the acquire hands it out); it is then no longer `held`. Its node stays
   * until released (or see `forceReleaseAfter`). Any finite number of ms > 0.
   */
  maxHold?: number;
  /**
   * With `maxHold`: this many ms after the hold expired, our own client deletes the node if the
   * holder has not released it, so a holder that is connected but hung does not keep the lock.
   * A plain delete: it leaves no release record (it is not a clean release).
   */
  forceReleaseAfter?: number;
}

/** A lease's hold bound, as it was handed out with. */
export interface HoldLimit {
  readonly maxHold: number;
  readonly forceReleaseAfter: number | undefined;
  /** When the hold expires, on the performance.now() clock (monotonic: a wall-clock step moves neither). */
  readonly expiresAt: number;
}

/** INVALID_ARGUMENT, naming the path, for a bound that is not a finite number of ms > 0, or a `forceReleaseAfter` without `maxHold`. */
export function checkHoldOptions(options: HoldOptions, path: string | undefined, op: string): void {
  const { maxHold, forceReleaseAfter } = options;
  // Every acquire comes here (Deadline): most have no bound, and need no array of them.
  if (maxHold === undefined && forceReleaseAfter === undefined) return;
  for (const [name, value] of [['maxHold', maxHold], ['forceReleaseAfter', forceReleaseAfter]] as const) {
    if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)) {
      throw new LockError('INVALID_ARGUMENT', `${name} must be a finite number of ms > 0, got ${String(value)}`, { path, op });
    }
  }
  if (forceReleaseAfter !== undefined && maxHold === undefined) {
    throw new LockError('INVALID_ARGUMENT', 'forceReleaseAfter needs maxHold: it counts from the end of the hold', { path, op });
  }
}

/** The bound of a lease handed out now, or undefined without `maxHold` (no timer at all then). */
function holdLimitFrom(options: HoldOptions): HoldLimit | undefined {
  const { maxHold, forceReleaseAfter } = options;
  return maxHold === undefined ? undefined : { maxHold, forceReleaseAfter, expiresAt: performance.now() + maxHold };
}

/** Hands `lease` out: its hold's clock starts now if `options` bound it. */
export function startHold<T extends { [limitHold](limit: HoldLimit): void }>(lease: T, options: HoldOptions): T {
  const limit = holdLimitFrom(options);
  if (limit) lease[limitHold](limit);
  return lease;
}
