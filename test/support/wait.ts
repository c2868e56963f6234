import type { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import { ROUND_TRIPS_MS } from './bounds.js';

/** Keeps the event loop busy for `ms`: no timer, no socket read runs meanwhile. */
export function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/** Resolves with the event's arguments the next time `emitter` emits `event`; rejects after `ms`. */
export function nextEvent(emitter: EventEmitter, event: string, ms = ROUND_TRIPS_MS): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      emitter.off(event, on);
      reject(new Error(`no "${event}" event within ${ms} ms`));
    }, ms);
    const on = (...args: unknown[]): void => {
      clearTimeout(timer);
      resolve(args);
    };
    emitter.once(event, on);
  });
}

/** Polls `probe` until it returns true; rejects after `ms`. */
export async function eventually(probe: () => boolean | Promise<boolean>, ms = ROUND_TRIPS_MS, what = 'condition'): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`${what} not reached within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Resolves as `promise` does, failing only when `count` (events so far: handoffs, rounds) stalls
 * for `stallMs` before it settles. A long run of events is bounded per event: its bound does not
 * grow with its length on a slow machine, and a hang still fails within one step's time.
 */
export async function whileProgressing<T>(promise: Promise<T>, count: () => number, what: string, stallMs = ROUND_TRIPS_MS): Promise<T> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  let last = count();
  let movedAt = Date.now();
  while (!settled) {
    await new Promise((r) => setTimeout(r, 25));
    const now = count();
    if (now !== last) [last, movedAt] = [now, Date.now()];
    else if (!settled && Date.now() - movedAt > stallMs) throw new Error(`${what}: no progress for ${stallMs} ms (stuck at ${last})`);
  }
  return promise;
}

/** A promise with its resolver, for callbacks that must be awaited. */
export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * Runs an idempotent client call again after a CONNECTIONLOSS (a member dropping its clients
 * during an election), waiting for the reconnect in between; bounded by `attempts`.
 */
export async function retryOnConnectionLoss<T>(
  client: { waitForConnected(options: { timeout: number }): Promise<void> },
  call: () => Promise<T>,
  attempts = 5,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (attempt >= attempts || (error as { code?: string }).code !== 'CONNECTIONLOSS') throw error;
      await client.waitForConnected({ timeout: ROUND_TRIPS_MS });
    }
  }
}
