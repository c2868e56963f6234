import { createHash } from 'node:crypto';
import type { ACL } from '../protocol/index.js';
import { Perms, ZooKeeperError } from '../protocol/index.js';

export { Perms };

/** Anyone may do anything. */
export const OPEN_ACL_UNSAFE: readonly ACL[] = Object.freeze([{ perms: Perms.ALL, id: { scheme: 'world', id: 'anyone' } }]);
/** Only the identities authenticated on the creating session. */
export const CREATOR_ALL_ACL: readonly ACL[] = Object.freeze([{ perms: Perms.ALL, id: { scheme: 'auth', id: '' } }]);
/** Anyone may read. */
export const READ_ACL_UNSAFE: readonly ACL[] = Object.freeze([{ perms: Perms.READ, id: { scheme: 'world', id: 'anyone' } }]);

/**
 * The ACL of the nodes created without one: a list for every node, or a function of the node's
 * path (the path passed to create, before any sequence suffix), as Curator's ACLProvider.
 */
export type AclProvider = readonly ACL[] | ((path: string) => readonly ACL[]);

/** The ACL `provider` gives `path`; INVALID_ARGUMENT with the path when it gives no non-empty list (the server would refuse it with INVALIDACL). */
export function aclOf(provider: AclProvider, path: string): readonly ACL[] {
  const acl: unknown = typeof provider === 'function' ? provider(path) : provider;
  if (!Array.isArray(acl) || acl.length === 0) throw new ZooKeeperError('INVALID_ARGUMENT', 'an ACL must be a non-empty list', { op: 'create', path });
  return acl as readonly ACL[];
}

/** The id of a digest ACL entry for user:password: `user:base64(sha1(user:password))`. */
export function digestId(user: string, password: string): string {
  return `${user}:${createHash('sha1').update(`${user}:${password}`).digest('base64')}`;
}

/** A digest ACL entry granting `perms` to user:password. */
export function digestAcl(user: string, password: string, perms: number = Perms.ALL): ACL {
  return { perms, id: { scheme: 'digest', id: digestId(user, password) } };
}
