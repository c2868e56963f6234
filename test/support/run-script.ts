import { spawn } from 'node:child_process';
import { once } from 'node:events';

/**
 * Runs a TypeScript fixture in its own process (for what must not happen in the test runner's:
 * an uncaught exception) and resolves with its exit code, its last stdout line parsed as JSON,
 * and its stderr.
 */
export async function runScript<T>(script: string, args: readonly string[]): Promise<{ code: number | null; result: T | undefined; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  const last = out.trim().split('\n').pop();
  return { code, result: last ? (JSON.parse(last) as T) : undefined, stderr };
}
