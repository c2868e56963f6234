import { ZooKeeperError } from '../protocol/index.js';

/**
 * The longest delay setTimeout honours (2^31−1 ms, about 24.8 days): a longer one fires at once,
 * with only a TimeoutOverflowWarning. It is also the largest session timeout the handshake's
 * int32 field can carry.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** The session timeout a client asks for by default (the `zklock` command's default too). */
export const DEFAULT_SESSION_TIMEOUT_MS = 15_000;

/** How long a request, and `connect()`, waits for a connection by default (`zklock --connect-timeout` too). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 20_000;

/** A duration option in ms: a finite number > 0 and at most MAX_TIMER_MS, else INVALID_ARGUMENT naming the option. */
export function checkDuration(value: unknown, name: string, where: { op?: string; path?: string } = {}): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > MAX_TIMER_MS) {
    throw new ZooKeeperError('INVALID_ARGUMENT', `${name} must be a number of ms in (0, ${MAX_TIMER_MS}], got ${String(value)}`, where);
  }
  return value;
}
