/**
 * Calls a listener of the application. Listeners run inside the session's frame and reconnect
 * loops: a throwing one must cost the other listeners nothing, and the session nothing. Its
 * error is rethrown on its own, as any callback's would be (see watch-manager's callWatcher).
 */
export function callListener<A extends unknown[]>(listener: (...args: A) => void, args: A, thisArg?: unknown): void {
  try {
    listener.apply(thisArg, args);
  } catch (error) {
    queueMicrotask(() => {
      throw error;
    });
  }
}
