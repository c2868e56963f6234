/**
 * Calls a listener, watcher or persistent watch listener of the application. They run inside the
 * session's frame and reconnect loops: a throwing one must cost the others their event nothing,
 * and the connection the frames after this one nothing. Its error is rethrown on its own, as an
 * uncaught exception of the caller's code.
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
