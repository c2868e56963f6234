/**
 * Aborts when the first of `signals` does, with its reason: `AbortSignal.any`, made of a plain
 * AbortController. Node 20 keeps every `AbortSignal.any` signal that has an 'abort' listener
 * strongly reachable for the life of the process (until the listener is removed, which a caller's
 * listener on a lease's signal never is), so one per lease leaked the signal, the leases and their
 * monitors (about 9.5 KB each). This one is held only by the listeners it puts on `signals`, and
 * it removes them all when the first aborts: once every source has ended (a lease's signal aborts
 * on release), nothing outside the caller's own references keeps it.
 */
export function anySignal(signals: readonly AbortSignal[]): AbortSignal {
  const controller = new AbortController();
  const first = signals.find((signal) => signal.aborted);
  if (first) {
    controller.abort(first.reason);
    return controller.signal;
  }
  const onAbort = (event: Event): void => {
    for (const signal of signals) signal.removeEventListener('abort', onAbort);
    controller.abort((event.target as AbortSignal).reason);
  };
  for (const signal of signals) signal.addEventListener('abort', onAbort);
  return controller.signal;
}

/**
 * `promise`, or a rejection with `failure()` as soon as `signal` aborts (at once if it has): a
 * wait the signal ends early, its listener gone however it ends. `promise` itself goes on; its
 * outcome no longer matters once the signal won.
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal, failure: () => unknown): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(failure());
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(failure());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
