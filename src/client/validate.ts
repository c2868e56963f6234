import type { ACL, MultiReadOp } from '../protocol/index.js';
import { CreateFlag, Perms, ZooKeeperError, isTtlFlag } from '../protocol/index.js';
import { OPEN_ACL_UNSAFE } from './acl.js';
import type { CreateMode } from './create-mode.js';
import { isSequential } from './create-mode.js';
import { checkDuration } from './durations.js';
import { toBytes } from './node-data.js';
import { validatePath } from './paths.js';

/*
 * The checks of every public argument, shared by the single operations, `multi` and `multiRead`:
 * each fails at the call with INVALID_ARGUMENT naming the argument (INVALID_PATH for a path),
 * before anything is sent. Without them a JavaScript caller's mistake reached the wire as
 * something else: a version of NaN went out as 0, 0.5 was truncated, a mode typo created a
 * PERSISTENT node, and numbers beyond int32 threw an untyped RangeError from the writer.
 */

/** Where the argument was given: the operation, its path when known. */
export interface Where {
  op: string;
  path?: string | undefined;
}

/** The largest TTL the server takes (EphemeralType.TTL: 40 bits of ms, about 34 years). */
export const MAX_TTL_MS = 2 ** 40 - 1;

const INT32_MAX = 2 ** 31 - 1;

export function invalidArgument(name: string, expected: string, value: unknown, where: Where): never {
  throw new ZooKeeperError('INVALID_ARGUMENT', `${name} must be ${expected}, got ${describe(value)}`, where);
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return 'an array';
  if (value !== null && typeof value === 'object') return 'an object';
  return String(value);
}

/** What no options and no bounds read as: one shared object, where a new one per call is garbage per request (the callers only read it). */
const NONE: Record<string, never> = Object.freeze({});

/** An options argument: an object, or nothing (its defaults). */
export function checkOptions<T extends object>(options: T | undefined, where: Where, name = 'options'): T | Record<string, never> {
  if (options === undefined) return NONE;
  if (options === null || typeof options !== 'object') invalidArgument(name, 'an object', options, where);
  return options;
}

/** The bounds every call takes: an AbortSignal and a timeout in ms. */
export function checkBounds(options: { signal?: AbortSignal | undefined; timeout?: number | undefined }, where: Where): { signal?: AbortSignal | undefined; timeout?: number | undefined } {
  const { signal, timeout } = options;
  // By its shape, not instanceof: a signal of another realm or a polyfill is one too.
  if (signal !== undefined && (signal === null || typeof signal !== 'object' || typeof signal.aborted !== 'boolean' || typeof signal.addEventListener !== 'function')) {
    invalidArgument('signal', 'an AbortSignal', signal, where);
  }
  if (timeout !== undefined) checkDuration(timeout, 'timeout', where);
  return signal === undefined && timeout === undefined ? NONE : { signal, timeout };
}

/** An expected version: an int32, -1 (the default) matching any; other negatives never match, so they are mistakes. */
export function checkVersion(value: unknown, where: Where, name = 'version', required = false): number {
  if (value === undefined && !required) return -1;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < -1 || value > INT32_MAX) {
    invalidArgument(name, `an integer in [-1, ${INT32_MAX}]`, value, where);
  }
  return value;
}

/** Node data: bytes, a string (stored as UTF-8), or nothing (empty). */
export function checkData(value: unknown, where: Where, name = 'data'): Uint8Array {
  if (value !== undefined && value !== null && typeof value !== 'string' && !(value instanceof Uint8Array)) {
    invalidArgument(name, 'a string, a Uint8Array, null or undefined', value, where);
  }
  return toBytes(value);
}

/** An ACL list: non-empty (the server refuses an empty one), each entry perms in 0..31 and a string scheme and id. */
export function checkAcl(value: unknown, where: Where, name = 'acl'): readonly ACL[] {
  if (value === undefined) return OPEN_ACL_UNSAFE;
  if (!Array.isArray(value) || value.length === 0) invalidArgument(name, 'a non-empty array of ACL entries', value, where);
  for (const [i, entry] of (value as unknown[]).entries()) {
    const at = `${name}[${i}]`;
    if (entry === null || typeof entry !== 'object') invalidArgument(at, 'an ACL entry { perms, id: { scheme, id } }', entry, where);
    const { perms, id } = entry as Partial<ACL>;
    if (typeof perms !== 'number' || !Number.isInteger(perms) || perms < 0 || perms > Perms.ALL) {
      invalidArgument(`${at}.perms`, `an integer in [0, ${Perms.ALL}] (a sum of Perms)`, perms, where);
    }
    if (id === null || typeof id !== 'object' || typeof id.scheme !== 'string' || typeof id.id !== 'string') {
      invalidArgument(`${at}.id`, 'an object { scheme: string, id: string }', id, where);
    }
  }
  return value as readonly ACL[];
}

/** A create's mode and ttl: a known mode; a TTL mode with a ttl in [1, MAX_TTL_MS] ms, any other mode without one. */
export function checkCreateMode(mode: unknown, ttl: unknown, where: Where, prefix = ''): { flags: number; ttl: number | undefined } {
  if (mode === undefined) mode = 'PERSISTENT';
  // An own key only: 'toString' is no mode.
  if (typeof mode !== 'string' || !Object.hasOwn(CreateFlag, mode)) {
    invalidArgument(`${prefix}mode`, `one of ${Object.keys(CreateFlag).join(', ')}`, mode, where);
  }
  const flags = CreateFlag[mode as CreateMode];
  if (isTtlFlag(flags)) {
    if (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < 1 || ttl > MAX_TTL_MS) invalidArgument(`${prefix}ttl`, `an integer number of ms in [1, ${MAX_TTL_MS}] for mode ${mode}`, ttl, where);
    return { flags, ttl };
  }
  if (ttl !== undefined) invalidArgument(`${prefix}ttl`, `undefined: only the TTL modes take one, not ${mode}`, ttl, where);
  return { flags, ttl: undefined };
}

/** The path of a create: a sequential one may end in '/' (the server appends the number). */
export function checkCreatePath(path: unknown, flags: number, op: string): string {
  return validatePath(path, op, isSequential(flags));
}

/** A callback argument (a watcher), optional unless `required`. */
export function checkFunction<F>(value: F | undefined, name: string, where: Where, required = false): F | undefined {
  if ((value !== undefined || required) && typeof value !== 'function') invalidArgument(name, 'a function', value, where);
  return value;
}

/** A credential for addAuth: a non-empty scheme and the auth as a string or bytes. */
export function checkCredential(scheme: unknown, auth: unknown, where: Where, prefix = ''): { scheme: string; auth: string | Uint8Array } {
  if (typeof scheme !== 'string' || scheme === '') invalidArgument(`${prefix}scheme`, 'a non-empty string', scheme, where);
  if (typeof auth !== 'string' && !(auth instanceof Uint8Array)) invalidArgument(`${prefix}auth`, 'a string or a Uint8Array', auth, where);
  return { scheme, auth };
}

/** The client's `auth` option: credentials, each checked as addAuth checks one. */
export function checkCredentials(value: unknown, where: Where): { scheme: string; auth: string | Uint8Array }[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) invalidArgument('auth', 'an array of { scheme, auth }', value, where);
  return (value as unknown[]).map((entry, i) => {
    if (entry === null || typeof entry !== 'object') invalidArgument(`auth[${i}]`, 'an object { scheme, auth }', entry, where);
    const { scheme, auth } = entry as { scheme?: unknown; auth?: unknown };
    return checkCredential(scheme, auth, where, `auth[${i}].`);
  });
}

export function checkBoolean(value: unknown, name: string, where: Where): boolean | undefined {
  if (value !== undefined && typeof value !== 'boolean') invalidArgument(name, 'a boolean', value, where);
  return value;
}

/** A list of ops (multi, multiRead): an array, each entry an object. */
export function checkOps(ops: unknown, where: Where, nonEmpty: boolean): readonly object[] {
  if (!Array.isArray(ops) || (nonEmpty && ops.length === 0)) invalidArgument('ops', nonEmpty ? 'a non-empty array of ops' : 'an array of ops', ops, where);
  for (const [i, op] of (ops as unknown[]).entries()) if (op === null || typeof op !== 'object') invalidArgument(`ops[${i}]`, 'an op object', op, where);
  return ops as readonly object[];
}

/** One read of a multiRead: getData or getChildren of a valid path. */
export function checkMultiReadOp(op: MultiReadOp, i: number): MultiReadOp {
  const where = { op: 'multiRead', path: typeof op.path === 'string' ? op.path : undefined };
  const type: unknown = op.type;
  if (type !== 'getData' && type !== 'getChildren') invalidArgument(`ops[${i}].type`, "'getData' or 'getChildren'", type, where);
  return { type: op.type, path: validatePath(op.path, 'multiRead') };
}
