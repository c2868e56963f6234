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

/**
 * A bigint is an immutable heap object of 24 bytes, and every lease and waiter keeps its node's
 * stat: equal zxids of one stat are read into one object (a new node has czxid = mzxid = pzxid),
 * and so is an owner equal to the last one read (a client mostly reads its own session's nodes).
 */
let lastOwner = 0n;

export function readStat(r: Reader): Stat {
  const czxid = r.long();
  const mzxid = same(r.long(), czxid);
  const ctime = r.longNumber();
  const mtime = r.longNumber();
  const version = r.int();
  const cversion = r.int();
  const aversion = r.int();
  const ephemeralOwner = (lastOwner = same(r.long(), lastOwner));
  const dataLength = r.int();
  const numChildren = r.int();
  const pzxid = same(same(r.long(), czxid), mzxid);
  return { czxid, mzxid, ctime, mtime, version, cversion, aversion, ephemeralOwner, dataLength, numChildren, pzxid };
}

/** `value`, or `known` when they are equal: one object for both. */
function same(value: bigint, known: bigint): bigint {
  return value === known ? known : value;
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
