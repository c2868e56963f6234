import type { ACL, MultiOp, RawOpResult, ServerErrorCode, Stat } from '../protocol/index.js';
import { OpCode, ZooKeeperError, errorName } from '../protocol/index.js';
import type { CreateMode } from './create-mode.js';
import type { Chroot } from './paths.js';
import { validatePath } from './paths.js';
import type { NodeData } from './node-data.js';
import { checkAcl, checkCreateMode, checkCreatePath, checkData, checkOps, checkVersion, invalidArgument } from './validate.js';

/** One operation of a transaction (`multi`). */
export type Op =
  | { op: 'create'; path: string; data?: NodeData; mode?: CreateMode; acl?: readonly ACL[]; ttl?: number }
  | { op: 'delete'; path: string; version?: number }
  | { op: 'setData'; path: string; data: NodeData; version?: number }
  | { op: 'check'; path: string; version: number };

export type OpResult =
  | { op: 'create'; path: string; /** Present when the server reports it (3.8 reports it for CONTAINER and TTL creates only). */ stat?: Stat }
  | { op: 'delete' }
  | { op: 'setData'; stat: Stat }
  | { op: 'check' };

/** A transaction failed: nothing was applied. `failedIndex` is the op that failed, `code` its error. */
export class MultiError extends ZooKeeperError {
  constructor(
    zkCode: number,
    readonly failedIndex: number,
    readonly failedOp: Op,
    /** Each op's code: OK before the failure, the failure's code, RUNTIMEINCONSISTENCY after it. */
    readonly codes: ServerErrorCode[],
  ) {
    super(errorName(zkCode), `transaction failed at op ${failedIndex} (${failedOp.op})`, { zkCode, op: 'multi', path: failedOp.path });
    this.name = 'MultiError';
  }
}

/** The ops as sent, each checked as its single operation is (validate.ts): a bad one fails the whole call, unsent. */
/** `aclFor`: the ACL of a create without one (the client's defaultAcl). */
export function toMultiOps(ops: readonly Op[], chroot: Chroot, aclFor: (path: string) => readonly ACL[]): MultiOp[] {
  return (checkOps(ops, { op: 'multi' }, true) as readonly Op[]).map((op, i): MultiOp => {
    const where = { op: 'multi', path: typeof op.path === 'string' ? op.path : undefined };
    const name = `ops[${i}].`;
    switch (op.op) {
      case 'create': {
        const { flags, ttl } = checkCreateMode(op.mode, op.ttl, where, name);
        const path = checkCreatePath(op.path, flags, 'multi');
        return { type: 'create', path: chroot.toServer(path), data: checkData(op.data, where, `${name}data`), acl: op.acl === undefined ? aclFor(path) : checkAcl(op.acl, where, `${name}acl`), flags, ttl };
      }
      case 'delete':
        return { type: 'delete', path: chroot.toServer(validatePath(op.path, 'multi')), version: checkVersion(op.version, where, `${name}version`) };
      case 'check':
        // No default: a check without a version checks nothing.
        return { type: 'check', path: chroot.toServer(validatePath(op.path, 'multi')), version: checkVersion(op.version, where, `${name}version`, true) };
      case 'setData':
        return { type: 'setData', path: chroot.toServer(validatePath(op.path, 'multi')), data: checkData(op.data, where, `${name}data`), version: checkVersion(op.version, where, `${name}version`) };
      default:
        return invalidArgument(`${name}op`, "'create', 'delete', 'setData' or 'check'", (op as { op: unknown }).op, where);
    }
  });
}

/** Typed results, or a MultiError naming the op that failed. */
export function toOpResults(ops: readonly Op[], raw: readonly RawOpResult[], chroot: Chroot): OpResult[] {
  const failed = raw.findIndex((r) => r.err !== 0 && r.err !== -2);
  if (failed !== -1 || raw.some((r) => r.type === OpCode.error)) {
    const index = failed === -1 ? 0 : failed;
    throw new MultiError(raw[index]?.err ?? -2, index, ops[index]!, raw.map((r) => errorName(r.err)));
  }
  return raw.map((r, i): OpResult => {
    const op = ops[i]!;
    switch (op.op) {
      case 'create':
        return r.stat ? { op: 'create', path: chroot.fromServer(r.path ?? '') ?? r.path ?? '', stat: r.stat } : { op: 'create', path: chroot.fromServer(r.path ?? '') ?? r.path ?? '' };
      case 'setData':
        return { op: 'setData', stat: r.stat! };
      default:
        return { op: op.op };
    }
  });
}
