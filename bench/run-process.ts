import { spawn } from 'node:child_process';

/** A scenario's process (a peer's, a probe's) runs seconds to a minute; one that runs this long is stuck, and is killed. */
const STUCK_AFTER_MS = 10 * 60_000;

/** Runs `file` and resolves with its stdout; rejects with the end of its stderr when it fails or gets stuck. */
export function runProcess(file: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: STUCK_AFTER_MS, killSignal: 'SIGKILL' });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolve(Buffer.concat(out).toString('utf8'));
      else reject(new Error(`${file} ${signal === 'SIGKILL' ? `was killed after ${STUCK_AFTER_MS} ms` : `exited with ${code}`}: ${Buffer.concat(err).toString('utf8').trim().split('\n').slice(-3).join(' | ')}`));
    });
  });
}

/**
 * Runs a probe script (TypeScript, through tsx) in a Node process of its own with `--expose-gc`,
 * so that what it allocates neither lives on in the benchmark's process nor disturbs its CPU
 * figures, and parses the JSON line it prints last.
 */
export async function runProbe(script: string, args: readonly string[]): Promise<Record<string, number>> {
  const text = await runProcess(process.execPath, ['--expose-gc', '--import', 'tsx', script, ...args]);
  return JSON.parse(text.trim().split('\n').at(-1) ?? '') as Record<string, number>;
}
