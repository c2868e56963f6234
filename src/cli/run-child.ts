import { spawn } from 'node:child_process';
import { CliError } from './cli-error.js';
import { EXIT } from './exit-codes.js';
import type { SignalRouter } from './signals.js';

export interface ChildOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when we terminated the child because `stopWhen` aborted. */
  stoppedBecause?: unknown;
}

export interface RunChildOptions {
  command: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  /** Signals to zklock go to the child from now on. */
  router: SignalRouter;
  /** When this aborts (the lock is lost), the child gets SIGTERM, then SIGKILL after `graceMs`. */
  stopWhen: AbortSignal;
  graceMs: number;
  onStopping?: (reason: unknown) => void;
  /**
   * `exec --revocable`: when `when` aborts (someone asked us to let go), the child gets `signal`,
   * then SIGKILL after `graceMs`; it is not "stopped": its own exit code counts.
   */
  revoke?: { when: AbortSignal; signal: NodeJS.Signals; onRevoking: () => void };
}

/** Runs the command with our stdio, passing our signals on; resolves when it has exited. */
export async function runChild(options: RunChildOptions): Promise<ChildOutcome> {
  const child = spawn(options.command, options.args, { stdio: 'inherit', env: options.env });
  options.router.route((signal) => child.kill(signal));
  let stoppedBecause: unknown;
  let killTimer: NodeJS.Timeout | undefined;
  const end = (signal: NodeJS.Signals): void => {
    child.kill(signal);
    // One SIGKILL deadline: a loss after a revocation request does not grant a second grace.
    killTimer ??= setTimeout(() => child.kill('SIGKILL'), options.graceMs);
  };
  const stop = (): void => {
    stoppedBecause = options.stopWhen.reason;
    options.onStopping?.(stoppedBecause);
    end('SIGTERM');
  };
  const { revoke } = options;
  const revoked = (): void => {
    revoke?.onRevoking();
    if (revoke) end(revoke.signal);
  };
  if (options.stopWhen.aborted) stop();
  else options.stopWhen.addEventListener('abort', stop, { once: true });
  if (revoke?.when.aborted) revoked();
  else revoke?.when.addEventListener('abort', revoked, { once: true });
  try {
    return await new Promise<ChildOutcome>((resolve, reject) => {
      child.once('error', (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') reject(new CliError(`command not found: ${options.command}`, EXIT.NOT_FOUND));
        else if (error.code === 'EACCES') reject(new CliError(`cannot execute ${options.command}: permission denied`, EXIT.CANNOT_EXECUTE));
        else reject(new CliError(`cannot run ${options.command}: ${error.message}`, EXIT.CANNOT_EXECUTE));
      });
      child.once('exit', (code, signal) => resolve({ code, signal, ...(stoppedBecause !== undefined ? { stoppedBecause } : {}) }));
    });
  } finally {
    clearTimeout(killTimer);
    options.stopWhen.removeEventListener('abort', stop);
    revoke?.when.removeEventListener('abort', revoked);
  }
}
