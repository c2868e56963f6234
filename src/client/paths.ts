import { ZooKeeperError } from '../protocol/index.js';

/**
 * Checks a path the way the server would (PathUtils.validatePath) so a bad path fails here,
 * before anything is sent. A sequential create may end in '/' (the server appends the number).
 */
export function validatePath(path: unknown, op: string, sequential = false): string {
  const fail = (why: string): never => {
    throw new ZooKeeperError('INVALID_PATH', `invalid path ${JSON.stringify(path)}: ${why}`, {
      op,
      path: typeof path === 'string' ? path : undefined,
    });
  };
  if (typeof path !== 'string') return fail('not a string');
  if (path.length === 0) return fail('empty');
  if (path[0] !== '/') return fail('must start with /');
  if (path.length === 1) return path;
  if (path.endsWith('/') && !sequential) return fail('must not end with /');
  const segments = path.slice(1, sequential && path.endsWith('/') ? -1 : undefined).split('/');
  for (const segment of segments) {
    if (segment === '') fail('empty segment (//)');
    if (segment === '.' || segment === '..') fail(`relative segment "${segment}"`);
  }
  for (let i = 0; i < path.length; i++) {
    const c = path.charCodeAt(i);
    if (c === 0 || (c > 0 && c < 0x20) || (c > 0x7e && c < 0xa0) || (c >= 0xd800 && c <= 0xf8ff) || (c >= 0xfff0 && c <= 0xffff)) {
      fail(`character U+${c.toString(16).padStart(4, '0')} at ${i} is not allowed`);
    }
  }
  return path;
}

/** The parent of a valid path ('/' for a top-level node). */
export function parentOf(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash <= 0 ? '/' : path.slice(0, slash);
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
