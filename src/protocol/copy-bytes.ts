/** Up to this many bytes, a loop copies faster than a native call (which also allocates a view of the source). */
const LOOP_COPY_BYTES = 64;

/**
 * Copies `length` bytes of `source` from `sourceStart` to `target` at `targetStart` (both ranges
 * within bounds: the callers checked them). Small copies, a request frame or a node's data of a
 * few bytes, are per request: done in a loop, with no allocation; `Buffer#copy` allocates a
 * view of the source whenever the range is not the whole of it.
 */
export function copyBytes(source: Uint8Array, sourceStart: number, target: Uint8Array, targetStart: number, length: number): void {
  if (length > LOOP_COPY_BYTES) {
    target.set(source.subarray(sourceStart, sourceStart + length), targetStart);
    return;
  }
  for (let i = 0; i < length; i++) target[targetStart + i] = source[sourceStart + i]!;
}
