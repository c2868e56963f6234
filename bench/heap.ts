/**
 * The heap as the heap-per-item rows count it, for the probes that run with `node --expose-gc`
 * (overload-probe.ts, memory-probe.ts): V8's used heap plus ArrayBuffer memory (frames and socket
 * buffers), after full collections, so that garbage not yet collected is not counted.
 */
const gc = (globalThis as { gc?: () => void }).gc;

export function heapAfterGc(): number {
  if (!gc) throw new Error('run with node --expose-gc');
  // Twice: the first collection's finalizers can free more for the second.
  gc();
  gc();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}
