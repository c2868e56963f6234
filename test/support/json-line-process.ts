import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { LOAD_SLACK_MS, ROUND_TRIPS_MS } from './bounds.js';

export type JsonLine = Record<string, unknown>;

/**
 * A peer process (a kazoo or Curator contender) that takes lines on its stdin and prints one JSON
 * object a line on its stdout; every line is kept, in order, for the test to look through (one
 * that is not a JSON object, say a runtime's warning, as `{ raw }`, which no event matches).
 * Its stderr is shown only when it exits with an error.
 */
export class JsonLineProcess {
  readonly lines: JsonLine[] = [];
  readonly exited: Promise<number | null>;
  private readonly waiters: (() => void)[] = [];
  private readonly child: ChildProcessWithoutNullStreams;

  constructor(
    readonly name: string,
    file: string,
    args: readonly string[],
  ) {
    this.child = spawn(file, args);
    let stderr = '';
    this.child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // A peer that has exited closes the pipe; a line to it then has no one to read it.
    this.child.stdin.on('error', () => undefined);
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      this.lines.push(parseLine(line));
      this.wake();
    });
    this.exited = new Promise((resolve) =>
      this.child.on('exit', (code) => {
        if (code !== 0) process.stderr.write(`${name} exited ${code}: ${stderr}\n`);
        this.wake();
        resolve(code);
      }),
    );
  }

  /**
   * Resolves with the first output line that has the key `match`, or for which `match` is true;
   * rejects after `ms` or if the process exits first. A JVM's start on a starved machine is within the default.
   */
  async line(match: string | ((line: JsonLine) => boolean), ms = ROUND_TRIPS_MS + LOAD_SLACK_MS): Promise<JsonLine> {
    const test = typeof match === 'string' ? (l: JsonLine) => match in l : match;
    const what = typeof match === 'string' ? `"${match}"` : 'the line awaited';
    const deadline = Date.now() + ms;
    for (;;) {
      const found = this.lines.find(test);
      if (found) return found;
      if (this.child.exitCode !== null) throw new Error(`${this.name} exited before printing ${what}`);
      if (Date.now() > deadline) throw new Error(`${this.name} printed no ${what} within ${ms} ms`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 200);
      });
    }
  }

  send(line: string): void {
    if (this.child.stdin.writable) this.child.stdin.write(`${line}\n`);
  }

  /** Closes its stdin: a peer that ends on EOF closes its sessions and exits. */
  end(): void {
    this.child.stdin.end();
  }

  kill(): void {
    this.child.kill('SIGKILL');
  }

  private wake(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }
}

function parseLine(line: string): JsonLine {
  try {
    const parsed: unknown = JSON.parse(line);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as JsonLine;
  } catch {
    // Not JSON: kept as it came.
  }
  return { raw: line };
}
