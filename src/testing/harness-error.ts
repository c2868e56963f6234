/**
 * The context carried by each {@link HarnessError}, keyed by its stable `code`.
 * Codes are part of the public API: match on `code`, never on `message`.
 */
export interface HarnessErrorContexts {
  /** No usable ZooKeeper installation was found (or an explicitly given one is incomplete). */
  ZOOKEEPER_NOT_FOUND: { readonly source: string; readonly tried: readonly string[] };
  /** No Java runtime was found. */
  JAVA_NOT_FOUND: { readonly tried: readonly string[] };
  /** The Java runtime is older than ZooKeeper 3.8 needs. */
  JAVA_TOO_OLD: { readonly java: string; readonly version: string; readonly required: number };
  /** A loopback port could not be obtained or was taken before the server bound it. */
  PORT_UNAVAILABLE: { readonly port?: number; readonly logFile?: string; readonly logTail?: string };
  /** A server did not become ready within its start timeout. */
  START_TIMEOUT: {
    readonly label: string;
    readonly timeoutMs: number;
    readonly logFile: string;
    readonly logTail: string;
  };
  /** A JVM exited while the harness was waiting for it to become ready. */
  PROCESS_EXITED: {
    readonly label: string;
    readonly exitCode: number | null;
    readonly signal: NodeJS.Signals | null;
    readonly logFile: string;
    readonly logTail: string;
  };
  /** A JVM could not be started at all (spawn failed). */
  SPAWN_FAILED: { readonly command: string; readonly cause: string };
  /** A JVM did not exit within the bound, even after SIGKILL. */
  STOP_TIMEOUT: { readonly label: string; readonly pid: number; readonly timeoutMs: number };
  /** An operation was called in a state that does not allow it (e.g. `pause()` on a stopped server). */
  INVALID_STATE: { readonly operation: string; readonly state: string };
  /** Options that cannot work together or are out of range. */
  INVALID_OPTIONS: { readonly option: string; readonly value: unknown };
  /** A four-letter-word command got no complete answer within its bound. */
  FOUR_LETTER_WORD_TIMEOUT: { readonly port: number; readonly word: string; readonly timeoutMs: number };
  /** A four-letter-word command failed at the socket level (e.g. connection refused). */
  FOUR_LETTER_WORD_FAILED: { readonly port: number; readonly word: string; readonly cause: string };
  /** The JDK `keytool` failed to generate the throwaway TLS key store. */
  KEYTOOL_FAILED: { readonly command: string; readonly output: string };
  /** An ensemble did not reach a serving quorum (or elect a leader) within the bound. */
  QUORUM_TIMEOUT: { readonly timeoutMs: number; readonly modes: Readonly<Record<number, string>> };
  /** A generic bounded wait (e.g. {@link FaultProxy.waitForBytes}) ran out of time. */
  WAIT_TIMEOUT: { readonly what: string; readonly timeoutMs: number };
  /** The watchdog process that cleans up after a dead test process could not be started. */
  WATCHDOG_UNAVAILABLE: { readonly cause: string };
}

/** Every stable error code the harness can throw. */
export type HarnessErrorCode = keyof HarnessErrorContexts;

/**
 * The single error class thrown by `zklock/testing`. `code` is stable; `context` holds
 * machine-readable details (for start failures it includes the tail of the server log).
 * Use {@link isHarnessError} to narrow both at once.
 */
export class HarnessError<C extends HarnessErrorCode = HarnessErrorCode> extends Error {
  override readonly name = 'HarnessError';
  readonly code: C;
  readonly context: HarnessErrorContexts[C];

  constructor(code: C, message: string, context: HarnessErrorContexts[C], options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.context = context;
  }
}

/** True when `error` is a {@link HarnessError}, optionally with the given `code` (narrowing `context`). */
export function isHarnessError<C extends HarnessErrorCode>(
  error: unknown,
  code?: C,
): error is HarnessError<C> {
  return error instanceof HarnessError && (code === undefined || error.code === code);
}
