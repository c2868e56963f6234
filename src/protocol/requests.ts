import { CreateFlag, OpCode } from './opcodes.js';
import type { ACL } from './records.js';
import { writeAcls } from './records.js';
import type { Writer } from './writer.js';

/** Bodies of request records, each written after the {xid, type} request header. */

export function writeRequestHeader(w: Writer, xid: number, type: number): Writer {
  return w.int(xid).int(type);
}

export interface CreateBody {
  path: string;
  data: Uint8Array | null;
  acl: readonly ACL[];
  flags: number;
  /** Only for the TTL modes. */
  ttl?: number | undefined;
}

export function isTtlFlag(flags: number): boolean {
  return flags === CreateFlag.PERSISTENT_WITH_TTL || flags === CreateFlag.PERSISTENT_SEQUENTIAL_WITH_TTL;
}

export function writeCreate(w: Writer, body: CreateBody): void {
  w.string(body.path).buffer(body.data);
  writeAcls(w, body.acl);
  w.int(body.flags);
  if (isTtlFlag(body.flags)) w.long(body.ttl ?? 0);
}

/** exists, getData, getChildren, getChildren2. */
export function writePathWatch(w: Writer, path: string, watch: boolean): void {
  w.string(path).bool(watch);
}

/** delete and check. */
export function writePathVersion(w: Writer, path: string, version: number): void {
  w.string(path).int(version);
}

export function writeSetData(w: Writer, path: string, data: Uint8Array | null, version: number): void {
  w.string(path).buffer(data).int(version);
}

export function writeSetACL(w: Writer, path: string, acl: readonly ACL[], version: number): void {
  w.string(path);
  writeAcls(w, acl);
  w.int(version);
}

/** getACL, sync, getEphemerals, getAllChildrenNumber. */
export function writePath(w: Writer, path: string): void {
  w.string(path);
}

/** addWatch (mode) and removeWatches/checkWatches (watcher type) share the {path, int} shape. */
export function writePathInt(w: Writer, path: string, value: number): void {
  w.string(path).int(value);
}

export function writeAuth(w: Writer, scheme: string, auth: Uint8Array): void {
  w.int(0).string(scheme).buffer(auth);
}

/** GetSASLRequest: the client's SASL token (the server answers with SetSASLResponse, a token too). */
export function writeSaslRequest(w: Writer, token: Uint8Array): void {
  w.buffer(token);
}

export interface WatchLists {
  data: readonly string[];
  exist: readonly string[];
  child: readonly string[];
  persistent: readonly string[];
  persistentRecursive: readonly string[];
}

/**
 * The watch re-registration record after a reconnect, and its opcode: SetWatches (101) when
 * `lists` holds no persistent watch, as the Java client sends; SetWatches2 (105, with the two
 * persistent lists) otherwise. A 3.5 server does not know 105: it answers UNIMPLEMENTED and
 * closes the connection, so a client that always sent 105 could never reconnect to one.
 */
export function writeSetWatches(w: Writer, relativeZxid: bigint, lists: WatchLists): void {
  w.long(relativeZxid).strings(lists.data).strings(lists.exist).strings(lists.child);
  if (setWatchesOpCode(lists) === OpCode.setWatches2) w.strings(lists.persistent).strings(lists.persistentRecursive);
}

export function setWatchesOpCode(lists: WatchLists): number {
  return lists.persistent.length > 0 || lists.persistentRecursive.length > 0 ? OpCode.setWatches2 : OpCode.setWatches;
}
