import { CreateFlag, OpCode } from './opcodes.js';
import type { Reader } from './reader.js';
import type { Stat } from './records.js';
import { readStat } from './records.js';
import type { CreateBody } from './requests.js';
import { isTtlFlag, writeCreate, writePathVersion, writePathWatch, writeSetData } from './requests.js';
import type { Writer } from './writer.js';
import { ZooKeeperError } from './zookeeper-error.js';

/** One operation of a write transaction (op 14). Creates always use the create2 family so results carry a Stat. */
export type MultiOp =
  | ({ type: 'create' } & CreateBody)
  | { type: 'delete'; path: string; version: number }
  | { type: 'setData'; path: string; data: Uint8Array | null; version: number }
  | { type: 'check'; path: string; version: number };

/** One operation of a read transaction (op 22). */
export type MultiReadOp = { type: 'getData'; path: string } | { type: 'getChildren'; path: string };

/** The opcode that creates a node of these flags and answers with {path, Stat}. */
export function createOpCode(flags: number): number {
  if (flags === CreateFlag.CONTAINER) return OpCode.createContainer;
  if (isTtlFlag(flags)) return OpCode.createTTL;
  return OpCode.create2;
}

function writeOpHeader(w: Writer, type: number): void {
  w.int(type).bool(false).int(-1);
}

function writeEnd(w: Writer): void {
  w.int(-1).bool(true).int(-1);
}

export function writeMulti(w: Writer, ops: readonly MultiOp[]): void {
  for (const op of ops) {
    switch (op.type) {
      case 'create':
        writeOpHeader(w, createOpCode(op.flags));
        writeCreate(w, op);
        break;
      case 'delete':
        writeOpHeader(w, OpCode.delete);
        writePathVersion(w, op.path, op.version);
        break;
      case 'setData':
        writeOpHeader(w, OpCode.setData);
        writeSetData(w, op.path, op.data, op.version);
        break;
      case 'check':
        writeOpHeader(w, OpCode.check);
        writePathVersion(w, op.path, op.version);
        break;
    }
  }
  writeEnd(w);
}

export function writeMultiRead(w: Writer, ops: readonly MultiReadOp[]): void {
  for (const op of ops) {
    writeOpHeader(w, op.type === 'getData' ? OpCode.getData : OpCode.getChildren);
    writePathWatch(w, op.path, false);
  }
  writeEnd(w);
}

/** A raw per-op result: `err` is 0 on success; the other fields depend on the op type. */
export interface RawOpResult {
  type: number;
  err: number;
  path?: string;
  stat?: Stat;
  data?: Buffer | null;
  children?: string[];
}

/**
 * Reads op results until the closing header. Results of a failed write transaction come as
 * type -1 entries carrying each op's error code.
 */
export function readMultiResults(r: Reader): RawOpResult[] {
  const results: RawOpResult[] = [];
  for (;;) {
    const type = r.int();
    const done = r.bool();
    const headerErr = r.int();
    if (done) break;
    switch (type) {
      case OpCode.error:
        results.push({ type, err: r.int() });
        break;
      case OpCode.create:
        results.push({ type, err: 0, path: r.string() });
        break;
      case OpCode.create2:
      case OpCode.createContainer:
      case OpCode.createTTL:
        results.push({ type, err: 0, path: r.string(), stat: readStat(r) });
        break;
      case OpCode.setData:
        results.push({ type, err: 0, stat: readStat(r) });
        break;
      case OpCode.delete:
      case OpCode.check:
        results.push({ type, err: 0 });
        break;
      case OpCode.getData:
        results.push({ type, err: 0, data: r.buffer(), stat: readStat(r) });
        break;
      case OpCode.getChildren:
        results.push({ type, err: 0, children: r.strings() });
        break;
      default:
        throw new ZooKeeperError('PROTOCOL_ERROR', `unexpected op type ${type} (err ${headerErr}) in a multi reply`);
    }
  }
  return results;
}
