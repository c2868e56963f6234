import { setTimeout as sleep } from 'node:timers/promises';

/** Waits for `promise` at most `ms`; resolves either way (for cleanup that must not hang the CLI). */
export async function bounded(promise: Promise<unknown>, ms: number): Promise<void> {
  const timer = new AbortController();
  await Promise.race([promise.then(() => undefined, () => undefined), sleep(ms, undefined, { signal: timer.signal }).catch(() => undefined)]);
  timer.abort();
}

/**
 * `promise`, or a rejection with the signal's reason as soon as it aborts (for a call that takes
 * no signal of its own; what it leaves behind must go with the client, closed afterwards).
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  promise.catch(() => undefined);
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** How long ago `since` was, as `850ms`, `12s`, `3m04s`, `2h05m`. */
export function formatAge(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}
