import { ZooKeeperError } from '../protocol/index.js';

/**
 * Checks a path the way the server would (PathUtils.validatePath) so a bad path fails here,
 * before anything is sent. A sequential create may end in '/' (the server appends the number).
 * One pass without allocations: it runs for every request.
 */
export function validatePath(path: unknown, op: string, sequential = false): string {
  if (typeof path !== 'string') return invalidPath(path, op, 'not a string');
  if (path.length === 0) return invalidPath(path, op, 'empty');
  if (path.charCodeAt(0) !== SLASH) return invalidPath(path, op, 'must start with /');
  if (path.length === 1) return path;
  const end = sequential && path.charCodeAt(path.length - 1) === SLASH ? path.length - 1 : path.length;
  let segmentStart = 1;
  for (let i = 1; i <= end; i++) {
    const c = i < end ? path.charCodeAt(i) : SLASH;
    if (c === SLASH) {
      const length = i - segmentStart;
      if (length === 0) return invalidPath(path, op, i === path.length ? 'must not end with /' : 'empty segment (//)');
      if (length <= 2 && path.charCodeAt(segmentStart) === DOT && (length === 1 || path.charCodeAt(segmentStart + 1) === DOT)) {
        return invalidPath(path, op, `relative segment "${path.slice(segmentStart, i)}"`);
      }
      segmentStart = i + 1;
    } else if (c < 0x20 || (c > 0x7e && c < 0xa0) || (c >= 0xd800 && c <= 0xf8ff) || c >= 0xfff0) {
      return invalidPath(path, op, `character U+${c.toString(16).padStart(4, '0')} at ${i} is not allowed`);
    }
  }
  return path;
}

const SLASH = 0x2f;
const DOT = 0x2e;

function invalidPath(path: unknown, op: string, why: string): never {
  throw new ZooKeeperError('INVALID_PATH', `invalid path ${JSON.stringify(path)}: ${why}`, { op, path: typeof path === 'string' ? path : undefined });
}

/** The parent of a valid path ('/' for a top-level node). */
export function parentOf(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash <= 0 ? '/' : path.slice(0, slash);
}

/** A valid path and its ancestors below the root, outermost first: '/a/b' → ['/a', '/a/b']; '/' → []. */
export function ancestry(path: string): string[] {
  const chain: string[] = [];
  for (let slash = path.indexOf('/', 1); slash !== -1; slash = path.indexOf('/', slash + 1)) chain.push(path.slice(0, slash));
  if (path !== '/') chain.push(path);
  return chain;
}

export function joinPath(parent: string, child: string): string {
  return parent === '/' ? `/${child}` : `${parent}/${child}`;
}

/** Maps between the user's paths and the server's when the connect string has a chroot. */
export class Chroot {
  constructor(readonly prefix: string) {}

  toServer(path: string): string {
    if (!this.prefix) return path;
    return path === '/' ? this.prefix : this.prefix + path;
  }

  /** The user's path for a server path, or undefined when it lies outside the chroot. */
  fromServer(path: string): string | undefined {
    if (!this.prefix) return path;
    if (path === this.prefix) return '/';
    return path.startsWith(`${this.prefix}/`) ? path.slice(this.prefix.length) : undefined;
  }
}
