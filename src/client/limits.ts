import { ZooKeeperError } from '../protocol/index.js';

/**
 * Requests written and not yet answered, by default. A server works on at most
 * `globalOutstandingLimit` requests at a time (1,000 by default, shared by all its clients) and
 * stops reading its sockets beyond that, so more in flight buys no throughput: the extra requests
 * only sit in socket buffers. And every request in flight when a connection drops ends with
 * CONNECTIONLOSS, its outcome unknown, while one still queued is simply sent on the next
 * connection. Twice the server's default leaves room for a round trip's worth on a server tuned
 * higher.
 */
export const DEFAULT_MAX_IN_FLIGHT = 2048;

/**
 * Requests waiting to be written, by default; one more fails at once with OVERLOADED. At the few
 * hundred bytes a queued request costs, 100,000 hold a few tens of MB, safe in the smallest heap;
 * and they are already seconds of work for a server (tens of thousands of requests a second): a
 * deeper queue adds only latency, and then a crash once the heap runs out (a million queued
 * requests took 1.3 GB before the queue was bounded). An application that means to queue more
 * raises it.
 */
export const DEFAULT_MAX_QUEUED = 100_000;

/** A count option: an integer ≥ `min`, or Infinity for no bound; else INVALID_ARGUMENT naming the option. */
export function checkLimit(value: unknown, name: string, min: number): number {
  if (typeof value !== 'number' || !(Number.isInteger(value) || value === Infinity) || value < min) {
    throw new ZooKeeperError('INVALID_ARGUMENT', `${name} must be an integer ≥ ${min} or Infinity, got ${String(value)}`);
  }
  return value;
}
