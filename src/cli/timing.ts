import { setTimeout as sleep } from 'node:timers/promises';

/** Waits for `promise` at most `ms`; resolves either way (for cleanup that must not hang the CLI). */
export async function bounded(promise: Promise<unknown>, ms: number): Promise<void> {
  const timer = new AbortController();
  await Promise.race([promise.then(() => undefined, () => undefined), sleep(ms, undefined, { signal: timer.signal }).catch(() => undefined)]);
  timer.abort();
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
