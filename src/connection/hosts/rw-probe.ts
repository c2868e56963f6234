import type { HostPort } from './connect-string.js';
import type { TlsOptions } from '../socket/transport.js';
import { openSocket } from '../socket/transport.js';

/**
 * Back-off between probes while connected read-only: Java's first step (100 ms), doubling up to
 * 10 s rather than Java's 60 s. A read-only client can neither take nor keep a lock, so the
 * bound is how long it may stay behind once a majority is back; the price is one short TCP
 * exchange per client every 5 to 10 s (jittered, so clients cut off together do not probe in step).
 */
export const MIN_PROBE_INTERVAL_MS = 100;
export const MAX_PROBE_INTERVAL_MS = 10_000;
/** Bound on one probe (connect, TLS handshake, answer): a silent host must not hold up the rotation. */
export const PROBE_TIMEOUT_MS = 2000;
/** The answer is "rw", "ro" or "null", or a refusal naming the whitelist: anything longer is not ZooKeeper. */
const MAX_ANSWER_BYTES = 128;

/**
 * Asks a server, with the `isro` four-letter word on a socket of its own (TLS when the client uses
 * TLS), whether it serves read/write clients. Resolves false for anything but "rw": "ro", "null"
 * (not serving), a server whose `4lw.commands.whitelist` lacks `isro`, no answer within
 * `timeoutMs`, a socket error, or `signal` aborted. Never rejects; the socket is always destroyed.
 */
export async function servesReadWrite(target: HostPort, timeoutMs: number, tls: TlsOptions | undefined, signal: AbortSignal): Promise<boolean> {
  let socket;
  try {
    socket = await openSocket(target, timeoutMs, tls, signal);
  } catch {
    return false;
  }
  const connected = socket;
  return new Promise<boolean>((resolve) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    const finish = (answer: string): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      connected.destroy();
      resolve(answer === 'rw');
    };
    const onAbort = (): void => finish('');
    const timer = setTimeout(onAbort, timeoutMs);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    connected.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      bytes += chunk.length;
      if (bytes > MAX_ANSWER_BYTES) finish('');
    });
    // The server closes the connection once it has answered.
    connected.on('end', () => finish(Buffer.concat(chunks).toString('latin1').trim()));
    connected.on('close', () => finish(''));
    connected.on('error', () => finish(''));
    // No half-close after the word: Netty (the TLS port) may drop a half-closed channel before answering.
    connected.write('isro');
  });
}

/**
 * While the session is connected to a read-only server, probes the other hosts in turn (one per
 * step, with back-off) until one serves read/write clients, then reports it once and stops.
 * Nothing runs after stop(): its timer is cleared and a probe in flight is aborted, its socket
 * destroyed, and its answer ignored.
 */
export class ReadWriteSeeker {
  private timer: NodeJS.Timeout | undefined;
  private probing: AbortController | undefined;

  constructor(
    private readonly isReadWrite: (host: HostPort, signal: AbortSignal) => Promise<boolean>,
    private readonly onFound: (host: HostPort) => void,
  ) {}

  start(candidates: readonly HostPort[]): void {
    this.stop();
    if (candidates.length === 0) return;
    const probing = new AbortController();
    this.probing = probing;
    let interval = MIN_PROBE_INTERVAL_MS;
    let next = 0;
    const schedule = (): void => {
      this.timer = setTimeout(() => void probe(), interval / 2 + Math.random() * (interval / 2));
      interval = Math.min(interval * 2, MAX_PROBE_INTERVAL_MS);
    };
    const probe = async (): Promise<void> => {
      const host = candidates[next]!;
      next = (next + 1) % candidates.length;
      const found = await this.isReadWrite(host, probing.signal);
      if (probing.signal.aborted) return;
      if (!found) return schedule();
      this.stop();
      this.onFound(host);
    };
    schedule();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.probing?.abort();
    this.probing = undefined;
  }
}
