import { connect } from 'node:net';
import { LOOPBACK } from './loopback-ports.js';
import { HarnessError } from './harness-error.js';

/** Default bound for one four-letter-word round trip. */
export const DEFAULT_FOUR_LETTER_WORD_TIMEOUT_MS = 2_000;

/** Options for {@link fourLetterWord}. */
export interface FourLetterWordOptions {
  /** Bound for connect + answer. Default 2000 ms. */
  readonly timeoutMs?: number;
}

/**
 * Sends a ZooKeeper four-letter-word command (`ruok`, `srvr`, `mntr`, `stat`, ...) to the plain
 * client port on 127.0.0.1 and resolves with the complete answer (the server closes the
 * connection after answering). Throws `FOUR_LETTER_WORD_TIMEOUT` when no complete answer arrives
 * in time (e.g. the server is paused) and `FOUR_LETTER_WORD_FAILED` on socket errors.
 */
export function fourLetterWord(port: number, word: string, options: FourLetterWordOptions = {}): Promise<string> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_FOUR_LETTER_WORD_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect({ host: LOOPBACK, port });
    // A total bound, not socket.setTimeout(): an idle timeout would restart with every byte.
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new HarnessError('FOUR_LETTER_WORD_TIMEOUT', `'${word}' to ${LOOPBACK}:${port} got no answer within ${timeoutMs} ms`, {
          port,
          word,
          timeoutMs,
        }),
      );
    }, timeoutMs);
    socket.on('close', () => clearTimeout(timer));
    // No half-close after the word: Netty (used with TLS) may drop a half-closed channel before answering.
    socket.on('connect', () => socket.write(word));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => {
      socket.destroy();
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    socket.on('error', (error) =>
      reject(
        new HarnessError(
          'FOUR_LETTER_WORD_FAILED',
          `'${word}' to ${LOOPBACK}:${port} failed: ${error.message}`,
          { port, word, cause: (error as NodeJS.ErrnoException).code ?? error.message },
          { cause: error },
        ),
      ),
    );
  });
}

/** The role a serving ZooKeeper reports in `srvr`. */
export type ServerMode = 'standalone' | 'leader' | 'follower' | 'observer' | 'read-only';

/** The parts of a `srvr` answer the harness and its users care about. */
export interface ServerStatus {
  readonly mode: ServerMode;
  /** Last zxid the server has processed. */
  readonly zxid: bigint;
  /** Number of znodes. */
  readonly nodeCount: number;
  /** Full `Zookeeper version:` line value. */
  readonly version: string;
}

const SERVER_MODES: readonly string[] = ['standalone', 'leader', 'follower', 'observer', 'read-only'];

function isServerMode(mode: string | undefined): mode is ServerMode {
  return mode !== undefined && SERVER_MODES.includes(mode);
}

/**
 * Parses a `srvr` answer. Returns `undefined` when the server answered but is not serving
 * (e.g. "This ZooKeeper instance is not currently serving requests" while electing a leader).
 */
export function parseServerStatus(answer: string): ServerStatus | undefined {
  const fields = new Map<string, string>();
  for (const line of answer.split('\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) fields.set(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  const mode = fields.get('Mode');
  const zxid = fields.get('Zxid');
  if (!isServerMode(mode) || zxid === undefined) return undefined;
  return {
    mode,
    zxid: BigInt(zxid),
    nodeCount: Number(fields.get('Node count') ?? 0),
    version: fields.get('Zookeeper version') ?? '',
  };
}
