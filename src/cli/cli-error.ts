import { ZooKeeperError } from '../client/index.js';
import { EXIT } from './exit-codes.js';

/** An error the CLI reports as one line on stderr, exiting with `exitCode`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.FAILURE,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** The exit code for a failure from the client or the recipes; lock-specific codes are decided where they can occur. */
export function exitCodeOf(error: unknown): number {
  if (error instanceof CliError) return error.exitCode;
  if (!(error instanceof ZooKeeperError)) return EXIT.FAILURE;
  switch (error.code) {
    case 'NOAUTH':
    case 'AUTHFAILED':
      return EXIT.NOT_AUTHORIZED;
    case 'CONNECTIONLOSS':
    case 'SESSIONEXPIRED':
    case 'TIMEOUT':
    case 'CLOSED':
      return EXIT.UNAVAILABLE;
    case 'INVALID_PATH':
    case 'INVALID_ARGUMENT':
      return EXIT.USAGE;
    default:
      return EXIT.FAILURE;
  }
}

/**
 * The message, with its causes' (e.g. the TLS error behind the CONNECTIONLOSS behind a connect
 * TIMEOUT), which are often the useful part.
 */
export function messageOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error && !error.message.includes(error.cause.message) ? ` (${messageOf(error.cause)})` : '';
  return `${error.message}${cause}`;
}
