import { createHash } from 'node:crypto';
import type { ACL } from '../protocol/index.js';
import { Perms } from '../protocol/index.js';

export { Perms };

/** Anyone may do anything. */
export const OPEN_ACL_UNSAFE: readonly ACL[] = Object.freeze([{ perms: Perms.ALL, id: { scheme: 'world', id: 'anyone' } }]);
/** Only the identities authenticated on the creating session. */
export const CREATOR_ALL_ACL: readonly ACL[] = Object.freeze([{ perms: Perms.ALL, id: { scheme: 'auth', id: '' } }]);
/** Anyone may read. */
export const READ_ACL_UNSAFE: readonly ACL[] = Object.freeze([{ perms: Perms.READ, id: { scheme: 'world', id: 'anyone' } }]);

/** The id of a digest ACL entry for user:password: `user:base64(sha1(user:password))`. */
export function digestId(user: string, password: string): string {
  return `${user}:${createHash('sha1').update(`${user}:${password}`).digest('base64')}`;
}

/** A digest ACL entry granting `perms` to user:password. */
export function digestAcl(user: string, password: string, perms: number = Perms.ALL): ACL {
  return { perms, id: { scheme: 'digest', id: digestId(user, password) } };
}
