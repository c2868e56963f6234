import { parseContender } from '../index.js';

/** Semaphore lease nodes (`_c_<uuid>-lease-<seq>`) are not queue contenders, but hold a slot just the same. */
const LEASE_NAME = /-lease-(\d{10}|-\d{9,10})$/;

/** A node a lock's contender made: a queue contender (zklock, Curator or kazoo name) or a semaphore's lease. */
export function isContenderNode(name: string): boolean {
  return parseContender(name) !== undefined || LEASE_NAME.test(name);
}
