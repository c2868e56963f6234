import type { ZooKeeperClient } from '../../client/index.js';
import { ZooKeeperError } from '../../client/index.js';

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

/**
 * OVERLOADED: the client refused to queue the request (its maxQueued was reached, or nothing may
 * wait and it is not connected); it was not sent. An acquire passes it on (the application is
 * outrunning the server and should back off), but a step that must not be given up (deleting our
 * node, watching it while we hold it) tries again once connected, after a pause in which the
 * queue drains: at once, it would only meet the same refusal, in a loop that starves the replies
 * it waits for.
 */
export function isOverloaded(error: unknown): boolean {
  return error instanceof ZooKeeperError && error.code === 'OVERLOADED';
}

/** The pause before a step refused with OVERLOADED is tried again: a few replies' worth. */
export const OVERLOAD_PAUSE_MS = 100;

/** Waits until session `session` is connected (or over), then OVERLOAD_PAUSE_MS. */
export async function pauseAfterOverload(client: ZooKeeperClient, session: bigint): Promise<void> {
  await client.waitForConnected({ session }).catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, OVERLOAD_PAUSE_MS));
}
