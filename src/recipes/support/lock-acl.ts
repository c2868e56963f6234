import type { ACL, AclProvider, ZooKeeperClient } from '../../client/index.js';
import { aclOf } from '../../client/index.js';

/**
 * The ACLs of the nodes a lock creates: one for all of them (a list, or a function of the path),
 * or one for its `path` (the lock path, any parent it creates, a semaphore's `locks` and `leases`)
 * and one for its `nodes` (contenders, leases, a simple lock's node). What is not given is the
 * client's `defaultAcl`. See README, *Locks on a shared ensemble*. A function for `nodes` is asked
 * with the path a contender is created at (its name before the server's sequence) and again with
 * the node's own path by the liveness proof's setACL (session-liveness.ts): it must answer both alike.
 */
export type LockAcl = AclProvider | { path?: AclProvider; nodes?: AclProvider };

export interface AclOptions {
  /** ACLs of everything this lock creates (default the client's `defaultAcl`, itself OPEN_ACL_UNSAFE by default). */
  acl?: LockAcl;
}

function part(acl: LockAcl | undefined, which: 'path' | 'nodes'): AclProvider | undefined {
  return acl === undefined || isProvider(acl) ? acl : acl[which];
}

function isProvider(acl: LockAcl): acl is AclProvider {
  return typeof acl === 'function' || Array.isArray(acl);
}

/** The ACL of the lock path and of every parent a lock creates; undefined: the client's default. */
export function pathAcl(acl: LockAcl | undefined): AclProvider | undefined {
  return part(acl, 'path');
}

/**
 * The ACL of a contender or lease node at `path`, resolved: the node is created with it, and
 * proveFresh sets it again (the same ACL: a setACL that changes nothing but the ACL version).
 */
export function nodeAcl(client: ZooKeeperClient, acl: LockAcl | undefined, path: string): readonly ACL[] {
  const provider = part(acl, 'nodes');
  return provider === undefined ? client.aclFor(path) : aclOf(provider, path);
}
