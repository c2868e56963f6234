import { spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
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

/** The shell's errors for a command it cannot start: 127 not found, 126 found but not executable. */
function cannotRun(command: string, code: 'ENOENT' | 'EACCES', after = ''): CliError {
  return code === 'ENOENT' ? new CliError(`command not found: ${command}${after}`, EXIT.NOT_FOUND) : new CliError(`cannot execute ${command}: permission denied${after}`, EXIT.CANNOT_EXECUTE);
}

/** execvp's default search path (glibc, libuv's uv__execvpe) when PATH is not set. */
const DEFAULT_PATH = '/usr/bin:/bin';

/** What execve would say of `file`: undefined when it can run it, else the error it would fail with. */
function execError(file: string): 'ENOENT' | 'EACCES' | undefined {
  try {
    // A directory passes X_OK (a search bit; for root, always), yet execve refuses it with EACCES.
    if (!statSync(file).isFile()) return 'EACCES';
    accessSync(file, constants.X_OK);
    return undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EACCES' ? 'EACCES' : 'ENOENT';
  }
}

/**
 * Refuses, before the lock is waited for and taken, a command that spawn would fail to start:
 * found only at the end of a wait, it cost the wait and a hold of the lock for nothing. As spawn
 * (execvp, no shell): a name with a slash is the file itself; a bare name is looked for in each
 * PATH directory of `env` (empty: the current one), EACCES if one was there but none could run.
 */
export function checkCommand(command: string, env: NodeJS.ProcessEnv): void {
  const after = '; the lock was not taken';
  if (command.includes('/')) {
    const error = execError(command);
    if (error) throw cannotRun(command, error, after);
    return;
  }
  let seen: 'ENOENT' | 'EACCES' = 'ENOENT';
  for (const dir of (env.PATH ?? DEFAULT_PATH).split(delimiter)) {
    const error = execError(join(dir || '.', command));
    if (!error) return;
    if (error === 'EACCES') seen = error;
  }
  throw cannotRun(command, seen, after);
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
        if (error.code === 'ENOENT' || error.code === 'EACCES') reject(cannotRun(options.command, error.code));
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
