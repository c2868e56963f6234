import type { ACL, Stat } from './records.js';
import { readAcls, readStat } from './records.js';
import type { Reader } from './reader.js';

/** Bodies of successful replies, read after the reply header. */

export interface PathStat {
  path: string;
  stat: Stat;
}

export function readCreate2(r: Reader): PathStat {
  return { path: r.string(), stat: readStat(r) };
}

export interface DataStat {
  data: Buffer | null;
  stat: Stat;
}

export function readData(r: Reader): DataStat {
  return { data: r.buffer(), stat: readStat(r) };
}

export interface ChildrenStat {
  children: string[];
  stat: Stat;
}

export function readChildren2(r: Reader): ChildrenStat {
  return { children: r.strings(), stat: readStat(r) };
}

export interface AclStat {
  acl: ACL[];
  stat: Stat;
}

export function readAclStat(r: Reader): AclStat {
  return { acl: readAcls(r), stat: readStat(r) };
}
