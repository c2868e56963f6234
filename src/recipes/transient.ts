import { ZooKeeperError } from '../client/index.js';

/**
 * The failures a recipe rides out by waiting for the session to reconnect and trying again
 * (Curator's RetryLoop.isRetryException, kazoo's RETRY_EXCEPTIONS): the connection dropped with
 * the request in flight (CONNECTIONLOSS: outcome unknown) or the request got no answer in time
 * (TIMEOUT). Anything else is an answer, or the end of the session or of the client.
 */
export function isTransient(error: unknown): boolean {
  return error instanceof ZooKeeperError && (error.code === 'CONNECTIONLOSS' || error.code === 'TIMEOUT');
}

/**
 * A create that failed this way may still have run on the server: transient, or aborted in
 * flight by the caller's deadline. Its node must be adopted or removed, never forgotten.
 */
export function createMayHaveRun(error: ZooKeeperError): boolean {
  return isTransient(error) || error.code === 'ABORTED';
}
