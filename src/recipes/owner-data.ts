import { hostname } from 'node:os';

/** What zklock writes into a contender node, so inspection and the CLI can say who holds or waits. */
export interface OwnerInfo {
  /** Free-form owner id: the caller's, or host:pid. */
  id: string;
  host: string;
  pid: number;
  /** When the contender node was created (ISO 8601). */
  since: string;
}

export function ownerData(id: string | undefined): Buffer {
  const host = hostname();
  const info: OwnerInfo = { id: id ?? `${host}:${process.pid}`, host, pid: process.pid, since: new Date().toISOString() };
  return Buffer.from(JSON.stringify(info));
}

/** Owner info from node data; data written by other libraries (kazoo's identifier, Curator's IP) becomes the id. */
export function parseOwner(data: Buffer): OwnerInfo | { id: string } {
  const text = data.toString('utf8');
  try {
    const parsed = JSON.parse(text) as Partial<OwnerInfo>;
    if (typeof parsed.id === 'string' && typeof parsed.host === 'string' && typeof parsed.pid === 'number') return parsed as OwnerInfo;
  } catch {
    // not ours
  }
  return { id: text };
}
