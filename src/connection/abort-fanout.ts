type Callback = () => void;

const fanouts = new WeakMap<AbortSignal, Set<Callback>>();

/**
 * Calls `callback` when `signal` aborts; returns the unsubscribe. One signal often bounds many
 * requests (an acquire's deadline, an application's shutdown signal): they share one 'abort'
 * listener per signal instead of one each, which past ten made Node print
 * MaxListenersExceededWarning (a leak, as far as anyone reading the log can tell).
 */
export function onAbort(signal: AbortSignal, callback: Callback): () => void {
  let callbacks = fanouts.get(signal);
  if (!callbacks) {
    const set = new Set<Callback>();
    callbacks = set;
    fanouts.set(signal, set);
    signal.addEventListener('abort', () => {
      for (const each of [...set]) each();
      set.clear();
    }, { once: true });
  }
  const set = callbacks;
  set.add(callback);
  return () => void set.delete(callback);
}
