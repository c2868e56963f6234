import type { Reader } from './reader.js';
import type { Writer } from './writer.js';

/** A node's metadata, as the server keeps it. zxids and the owner session id are 64-bit: bigint. */
export interface Stat {
  czxid: bigint;
  mzxid: bigint;
  /** Creation time, ms since the epoch. */
  ctime: number;
  mtime: number;
  version: number;
  cversion: number;
  aversion: number;
  /** The owning session id for an ephemeral node, 0n otherwise. */
  ephemeralOwner: bigint;
  dataLength: number;
  numChildren: number;
  pzxid: bigint;
}

export const STAT_BYTES = 68;

export function readStat(r: Reader): Stat {
  return {
    czxid: r.long(),
    mzxid: r.long(),
    ctime: r.longNumber(),
    mtime: r.longNumber(),
    version: r.int(),
    cversion: r.int(),
    aversion: r.int(),
    ephemeralOwner: r.long(),
    dataLength: r.int(),
    numChildren: r.int(),
    pzxid: r.long(),
  };
}

export interface Id {
  scheme: string;
  id: string;
}

export interface ACL {
  perms: number;
  id: Id;
}

export function writeAcls(w: Writer, acls: readonly ACL[]): void {
  w.int(acls.length);
  for (const acl of acls) w.int(acl.perms).string(acl.id.scheme).string(acl.id.id);
}

export function readAcls(r: Reader): ACL[] {
  return r.vector((x) => ({ perms: x.int(), id: { scheme: x.string(), id: x.string() } }), 12);
}

export interface WatcherEvent {
  type: number;
  state: number;
  path: string;
}

export function readWatcherEvent(r: Reader): WatcherEvent {
  return { type: r.int(), state: r.int(), path: r.string() };
}

export interface ReplyHeader {
  xid: number;
  zxid: bigint;
  err: number;
}

export const REPLY_HEADER_BYTES = 16;

export function readReplyHeader(r: Reader): ReplyHeader {
  return { xid: r.int(), zxid: r.long(), err: r.int() };
}
