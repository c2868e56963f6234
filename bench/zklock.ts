/**
 * zklock as shipped: the compiled `dist/` that `npm run bench` builds first, not `src/` through
 * tsx, whose esbuild transform (keepNames) wraps every closure the hot path creates in a
 * `__name()` call — a few percent of client CPU that users never pay. The types come from `src/`,
 * which `dist/` is compiled from, so type checking does not depend on a build.
 */
import type * as Zklock from '../src/index.js';

const built = (await import(new URL('../dist/index.js', import.meta.url).href)) as typeof Zklock;

export type ZooKeeperClient = Zklock.ZooKeeperClient;
export const ZooKeeperClient = built.ZooKeeperClient;
export type Mutex = Zklock.Mutex;
export const Mutex = built.Mutex;
export type ReadWriteLock = Zklock.ReadWriteLock;
export const ReadWriteLock = built.ReadWriteLock;
export type Semaphore = Zklock.Semaphore;
export const Semaphore = built.Semaphore;
export type Lease = Zklock.Lease;
export type WatchMessage = Zklock.WatchMessage;
export const watchChannel = built.watchChannel;
export const requestChannel = built.requestChannel;
export const acquireChannel = built.acquireChannel;
export const releaseChannel = built.releaseChannel;
export const lostChannel = built.lostChannel;
export const revocationChannel = built.revocationChannel;
export const sessionChannel = built.sessionChannel;
