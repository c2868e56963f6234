import type { FaultProxy } from '../../src/testing/index.js';
import { ROUND_TRIPS_MS } from './bounds.js';
import { eventually } from './wait.js';

/**
 * Loses the reply to the `nth` request whose bytes contain `marker` (any of them, given several):
 * once that request has gone upstream, replies are black-holed; once one was dropped the
 * connection is reset, so the client sees CONNECTIONLOSS for a request the server did execute,
 * and reconnects.
 */
export async function loseReplyTo(proxy: FaultProxy, marker: string | readonly string[], nth = 1): Promise<void> {
  let seen = 0;
  const markers = typeof marker === 'string' ? [marker] : marker;
  const droppedBefore = proxy.stats().droppedDownstreamBytes;
  const unsubscribe = proxy.onChunk((event) => {
    if (seen < nth && event.direction === 'upstream' && !event.dropped && markers.some((m) => event.chunk.includes(m)) && ++seen === nth) proxy.blackhole('downstream');
  });
  try {
    await eventually(() => seen === nth && proxy.stats().droppedDownstreamBytes > droppedBefore, ROUND_TRIPS_MS, `reply to request #${nth} with "${markers.join(`" or "`)}" dropped`);
  } finally {
    unsubscribe();
  }
  proxy.resetAll();
  proxy.passThrough();
}

/**
 * Black-holes every reply once a request whose bytes contain `marker` has gone upstream, leaving
 * the connection half-open: the server runs the request, the client hears nothing until
 * `restore()` resets the connection. `sent` says whether the request went.
 */
export function silenceRepliesAfter(proxy: FaultProxy, marker: string): { readonly sent: boolean; stop(): void; restore(): void } {
  let sent = false;
  const unsubscribe = proxy.onChunk((event) => {
    if (!sent && event.direction === 'upstream' && event.chunk.includes(marker)) {
      sent = true;
      proxy.blackhole('downstream');
    }
  });
  return {
    get sent() {
      return sent;
    },
    /** Stops watching for the request (replies stay black-holed). */
    stop: unsubscribe,
    restore() {
      unsubscribe();
      proxy.resetAll();
      proxy.passThrough();
    },
  };
}
