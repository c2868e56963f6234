import { parseContender } from '../index.js';
import { KAZOO_LEASE_NAME, LEASE_NAME } from '../recipes/inspect.js';

/** A node a lock's contender made: a queue contender (zklock, Curator or kazoo name) or a semaphore's lease, Curator's or kazoo's (no queue contender, but it holds a slot just the same). */
export function isContenderNode(name: string): boolean {
  return parseContender(name) !== undefined || LEASE_NAME.test(name) || KAZOO_LEASE_NAME.test(name);
}
