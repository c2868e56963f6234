import { AsyncLocalStorage } from 'node:async_hooks';

/** What the current async call chain holds: one entry per lock object, with its re-entry count. */
export interface Holding<L> {
  lease: L;
  count: number;
}

const held = new AsyncLocalStorage<ReadonlyMap<object, Holding<unknown>>>();

/** The holding of `lock` in the current call chain, if any. */
export function heldBy<L>(lock: object): Holding<L> | undefined {
  return held.getStore()?.get(lock) as Holding<L> | undefined;
}

/** Runs `fn` with `lock` recorded as held by this call chain (and every chain it starts). */
export function runHolding<L, T>(lock: object, lease: L, fn: () => Promise<T>): Promise<T> {
  const next = new Map(held.getStore());
  next.set(lock, { lease, count: 1 });
  return held.run(next, fn);
}
