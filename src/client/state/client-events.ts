import type { SessionEvent } from '../../connection/index.js';
import type { ZooKeeperError } from '../../protocol/index.js';

/**
 * A ZooKeeperClient's events and the arguments their listeners get: `client.on('conected', ...)`
 * fails to compile. Every state change is emitted as `state`, and under its own name (with no
 * arguments, but for those that say what was lost or why).
 */
export interface ClientEvents extends Record<Exclude<SessionEvent, 'suspended' | 'expired' | 'closed'>, []> {
  state: [event: SessionEvent, reason?: ZooKeeperError];
  /** The connection was lost; the session lives on, and its requests wait for the next one. */
  suspended: [reason: ZooKeeperError];
  /** The session is gone, with its ephemeral nodes and watches. */
  expired: [reason: ZooKeeperError];
  /** The client is closed: by close() (no reason), or by itself when a server refused its credentials (AUTHFAILED). */
  closed: [reason?: ZooKeeperError];
  /**
   * A connection attempt or a connection failed: refused, DNS, TLS, a silent server, malformed
   * bytes. The client tries the next host by itself.
   */
  connectionError: [error: Error];
  /** A server refused an identity of `addAuth` (or the `auth` option); `closed` follows, with the same reason. */
  authFailed: [error: ZooKeeperError];
}
