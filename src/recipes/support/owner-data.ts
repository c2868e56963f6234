import { hostname } from 'node:os';

const HOST = hostname();

/** What zklock writes into a contender node, so inspection and the CLI can say who holds or waits. */
export interface OwnerInfo {
  /** Free-form owner id: the caller's, or host:pid. */
  id: string;
  host: string;
  pid: number;
  /** Set on a write node whose holder downgraded to a read lock: readers no longer wait for it. */
  downgraded?: true;
  /**
   * Names the acquisition attempt that created the node, where the node's name cannot (the simple
   * lock's fixed path): several callers share one session, so only this tells whose node it is.
   */
  attempt?: string;
  /** The holder listens for revocation requests (its lock is revocable): `zklock revoke` can say so before asking. */
  revocable?: true;
  /**
   * Someone asked this contender to let go (requestRevocation): written beside the owner, not
   * over it as Curator's bytes are, so that whoever it was stays known.
   */
  revocationRequested?: true;
  /**
   * Written by the holder once it held the lock (`zklock exec` does): the node's mtime, the
   * server's clock at that write or a later one, is then a time by which the hold had begun.
   */
  held?: true;
}

/**
 * Owner data; `attempt` only for a node whose name does not identify the attempt (queue locks
 * build theirs once per lock); `revocable` for a lock that listens for revocation requests.
 */
export function ownerData(id: string | undefined, extra: { attempt?: string; revocable?: boolean } = {}): Buffer {
  // The default owner's data, shared: every lock object keeps its data, and most have no owner id of their own. Nobody writes into it.
  if (id === undefined && extra.attempt === undefined) return (DEFAULT_DATA[extra.revocable ? 1 : 0] ??= build(undefined, extra));
  return build(id, extra);
}

/** The default owner's data, not revocable and revocable (see ownerData). */
const DEFAULT_DATA: [Buffer?, Buffer?] = [];

function build(id: string | undefined, extra: { attempt?: string; revocable?: boolean }): Buffer {
  // No timestamp: the node's ctime says when it was created, and a queue lock's data stays the same for every acquisition.
  const info: OwnerInfo = {
    id: id ?? `${HOST}:${process.pid}`,
    host: HOST,
    pid: process.pid,
    ...(extra.attempt === undefined ? {} : { attempt: extra.attempt }),
    ...(extra.revocable ? { revocable: true as const } : {}),
  };
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

/** The attempt named in owner data, if zklock wrote one there. */
export function attemptOf(data: Buffer): string | undefined {
  const owner = parseOwner(data);
  return 'attempt' in owner && typeof owner.attempt === 'string' ? owner.attempt : undefined;
}

/** Whether a contender's data is zklock's owner record (not kazoo's identifier, not Curator's IP). */
export function writtenByZklock(data: Buffer): boolean {
  return 'pid' in parseOwner(data);
}

/** Marks owner data as a downgraded writer's (see ReadWriteLock.downgrade). */
export function downgradedData(data: Buffer): Buffer {
  const owner = parseOwner(data);
  return Buffer.from(JSON.stringify({ ...owner, downgraded: true }));
}

/** Only zklock writes the marker; other libraries' data never carries it. */
export function isDowngraded(data: Buffer): boolean {
  const owner = parseOwner(data);
  return 'downgraded' in owner && owner.downgraded === true;
}

/** Marks a holder's owner data as held (see OwnerInfo.held); undefined for data that is not zklock's. */
export function heldData(data: Buffer): Buffer | undefined {
  const owner = parseOwner(data);
  return 'pid' in owner ? Buffer.from(JSON.stringify({ ...owner, held: true })) : undefined;
}

/** Whether a holder marked its owner data as held (see OwnerInfo.held). */
export function isMarkedHeld(data: Buffer): boolean {
  const owner = parseOwner(data);
  return 'held' in owner && owner.held === true;
}
