import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Settles like `promise`, or rejects with `onTimeout()` after `timeoutMs`.
 * The timer is deliberately ref'd: while a caller awaits a harness operation, the process must
 * stay alive exactly as it would for any other awaited I/O. It is cleared as soon as we settle.
 */
export async function withTimeout<T>(promise: Promise<T>, timeoutMs: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), timeoutMs);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** True when `promise` fulfils within `timeoutMs`, false when it does not (or rejects). */
export async function fulfilsWithin(promise: Promise<unknown>, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([promise.then(() => true, () => false), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Bounds and hooks for {@link pollUntil}. */
export interface PollOptions<A> {
  readonly timeoutMs: number;
  readonly intervalMs: number;
  /** Called on expiry; `lastError` is what the last probe threw, if anything. */
  readonly onTimeout: (lastError: unknown) => Error;
  /** Stops the poll early: once `when` fulfils, the poll rejects with `error(value)`. */
  readonly abort?: { readonly when: Promise<A>; readonly error: (value: A) => Error };
}

/**
 * Calls `probe` until it returns a value other than `undefined`, at most every `intervalMs`,
 * for at most `timeoutMs`. A probe that throws counts as "not yet".
 */
export async function pollUntil<T, A = never>(probe: () => Promise<T | undefined>, options: PollOptions<A>): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  let lastError: unknown;
  let settled = false;
  const loop = async (): Promise<T> => {
    while (!settled) {
      try {
        const value = await probe();
        if (value !== undefined) return value;
      } catch (error) {
        lastError = error;
      }
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw options.onTimeout(lastError);
      await sleep(Math.min(options.intervalMs, remaining));
    }
    // Only reached after an abort, whose own rejection is what the caller sees.
    throw new Error('poll aborted');
  };
  const { abort } = options;
  if (abort === undefined) return loop();
  const attempts = loop();
  attempts.catch(() => undefined);
  const aborted = abort.when.then((value): never => {
    throw abort.error(value);
  });
  try {
    return await Promise.race([attempts, aborted]);
  } finally {
    // Also stops `aborted` from mattering when it fires long after the poll is over.
    settled = true;
    aborted.catch(() => undefined);
  }
}
