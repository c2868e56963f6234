/** Node data as callers may pass it: bytes, or a string stored as UTF-8; nothing means empty. */
export type NodeData = Uint8Array | string | null | undefined;

const EMPTY = new Uint8Array(0);

export function toBytes(data: NodeData): Uint8Array {
  if (data === undefined || data === null) return EMPTY;
  return typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
}
