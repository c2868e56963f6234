import type { ACL } from '../protocol/index.js';
import { digestId } from '../client/acl.js';

/**
 * A digest identity for tests with several of them (a service, an operator, a stranger): its
 * credentials for `ZooKeeperClient.connect(…, { auth })` and the ACL entries naming it.
 */
export interface DigestIdentity {
  readonly user: string;
  readonly password: string;
  /** `digest:user:base64(sha1(user:password))`, the id ACL entries name it by. */
  readonly id: string;
  /** The client option that authenticates as this identity. */
  readonly auth: readonly { scheme: 'digest'; auth: string }[];
  /** The ACL entry granting this identity `perms` (Perms bits). */
  acl(perms: number): ACL;
}

/** The identity `user` with `password` (default `<user>-password`). */
export function digestIdentity(user: string, password = `${user}-password`): DigestIdentity {
  const id = digestId(user, password);
  return { user, password, id, auth: [{ scheme: 'digest', auth: `${user}:${password}` }], acl: (perms) => ({ perms, id: { scheme: 'digest', id } }) };
}
