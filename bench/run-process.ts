import { spawn } from 'node:child_process';

/** A scenario's process (a peer's, a probe's) runs seconds to a minute; one that runs this long is stuck, and is killed. */
const STUCK_AFTER_MS = 10 * 60_000;

/**
 * The line that says why a process died, wherever it is in its stderr: V8's `FATAL ERROR: … heap
 * out of memory` and the JVM's uncaught exception come before a stack trace, so the last lines
 * alone would show only frames; a JVM's `OutOfMemoryError` and Python's `MemoryError` may too.
 */
const FATAL = /FATAL ERROR|^Exception in thread|OutOfMemoryError|MemoryError/;

/** Why a process failed: its fatal line (see {@link FATAL}) if it printed one, then the last three lines of its stderr. */
export function failureOutput(stderr: string): string {
  const lines = stderr.trim().split('\n');
  const fatal = lines.find((line) => FATAL.test(line));
  const last = lines.slice(-3);
  return [...(fatal !== undefined && !last.includes(fatal) ? [fatal.trim()] : []), ...last].join(' | ');
}

/**
 * Runs `file` and resolves with its stdout; rejects with its fatal line and the end of its stderr
 * when it fails, or when it runs past `timeoutMs` (then it is killed).
 */
export function runProcess(file: string, args: readonly string[], timeoutMs = STUCK_AFTER_MS): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs, killSignal: 'SIGKILL' });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolve(Buffer.concat(out).toString('utf8'));
      else {
        const how = signal === 'SIGKILL' ? `was killed after ${timeoutMs} ms` : signal ? `died of ${signal}` : `exited with ${code}`;
        reject(new Error(`${file} ${how}: ${failureOutput(Buffer.concat(err).toString('utf8'))}`));
      }
    });
  });
}

/**
 * Runs a probe script (TypeScript, through tsx) in a Node process of its own with `--expose-gc`,
 * so that what it allocates neither lives on in the benchmark's process nor disturbs its CPU
 * figures, and parses the JSON line it prints last. `nodeOptions` go before the script (a heap
 * limit, say).
 */
export async function runProbe<T = Record<string, number>>(script: string, args: readonly string[], { nodeOptions = [], timeoutMs }: { nodeOptions?: readonly string[]; timeoutMs?: number } = {}): Promise<T> {
  const text = await runProcess(process.execPath, ['--expose-gc', ...nodeOptions, '--import', 'tsx', script, ...args], timeoutMs);
  return JSON.parse(text.trim().split('\n').at(-1) ?? '') as T;
}
