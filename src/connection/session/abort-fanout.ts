type Callback = () => void;

interface Fanout {
  readonly callbacks: Set<Callback>;
  readonly listener: () => void;
}

const fanouts = new WeakMap<AbortSignal, Fanout>();

/**
 * Calls `callback` when `signal` aborts; returns the unsubscribe. One signal often bounds many
 * requests (an acquire's deadline, an application's shutdown signal): they share one 'abort'
 * listener per signal instead of one each, which past ten made Node print
 * MaxListenersExceededWarning (a leak, as far as anyone reading the log can tell). The listener
 * goes with the last callback: Node 20 never frees an `AbortSignal.any` (or a pending
 * `AbortSignal.timeout`) while it has one, so a caller's signal that never aborts would be kept
 * for good after the requests it bounded were answered.
 */
export function onAbort(signal: AbortSignal, callback: Callback): () => void {
  let fanout = fanouts.get(signal);
  if (!fanout) {
    const callbacks = new Set<Callback>();
    const listener = (): void => {
      fanouts.delete(signal);
      for (const each of [...callbacks]) each();
      callbacks.clear();
    };
    fanout = { callbacks, listener };
    fanouts.set(signal, fanout);
    signal.addEventListener('abort', listener, { once: true });
  }
  const { callbacks, listener } = fanout;
  callbacks.add(callback);
  return () => {
    if (!callbacks.delete(callback) || callbacks.size > 0 || fanouts.get(signal)?.listener !== listener) return;
    fanouts.delete(signal);
    signal.removeEventListener('abort', listener);
  };
}
