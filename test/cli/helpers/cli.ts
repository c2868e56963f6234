import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ROUND_TRIPS_MS } from '../../support/bounds.js';
import { eventually } from '../../support/wait.js';

/** The built CLI (tests run it as users do: `npm run build` first). */
export const CLI = fileURLToPath(new URL('../../../dist/cli/main.js', import.meta.url));
/** The command the tests run under `zklock exec`. */
export const HOLD = fileURLToPath(new URL('../fixtures/hold.mjs', import.meta.url));
/**
 * A hold longer than any test, for holds the test ends itself (a signal, `release --force`,
 * {@link endHolds}) once it has checked what it wanted: a hold of fixed length would end early
 * on a machine too busy to start the next CLI process in time.
 */
export const LONG_HOLD_MS = 10 * 60_000;

/** Ends every hold logged in `log` as started and not yet ended (see fixtures/hold.mjs). */
export function endHolds(log: string): void {
  const events = readEvents(log);
  const ended = new Set(events.filter((e) => e.event === 'end').map((e) => e.pid));
  for (const { pid } of events.filter((e) => e.event === 'start' && !ended.has(e.pid))) process.kill(pid, 'SIGUSR2');
}

export interface CliRun {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code (or 128+N for a signal), rejects after `ms`. */
  exited: (ms?: number) => Promise<number>;
}

/** The exit code `done` resolves with, or a rejection with `why()` after `ms`. */
async function exitedWithin(done: Promise<number>, ms: number, why: () => string): Promise<number> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(why())), ms);
  });
  try {
    return await Promise.race([done, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export function startCli(args: readonly string[], env: NodeJS.ProcessEnv = {}): CliRun {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = once(child, 'close').then(([code, signal]) => (code as number | null) ?? 128 + (signal === 'SIGKILL' ? 9 : 15));
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited: (ms = 30_000) => exitedWithin(done, ms, () => `zklock ${args.join(' ')} did not exit within ${ms} ms; stderr: ${stderr}`),
  };
}

/** A zklock run on a terminal of its own (a pty from util-linux `script`), for what only a terminal shows or sends. */
export interface TerminalRun {
  /** Everything the terminal showed (stdout and stderr, escape sequences included). */
  screen: () => string;
  /** Types on the terminal: '\x03' is Ctrl-C, which the terminal turns into SIGINT for zklock. */
  type: (keys: string) => void;
  /** Resolves with zklock's exit code, rejects after `ms`. */
  exited: (ms?: number) => Promise<number>;
  kill: () => void;
}

export function startCliInTerminal(args: readonly string[], env: NodeJS.ProcessEnv = {}, columns = 80): TerminalRun {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
  const quote = (word: string): string => `'${word.replace(/'/g, "'\\''")}'`;
  const shell = `stty cols ${columns}; exec ${[process.execPath, CLI, ...args].map(quote).join(' ')}`;
  // -e: script exits with zklock's code; -q: no banner; /dev/null: no typescript file.
  const child = spawn('script', ['-qec', shell, '/dev/null'], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let screen = '';
  child.stdout.on('data', (chunk: Buffer) => (screen += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (screen += chunk.toString()));
  const done = once(child, 'close').then(([code]) => code as number);
  return {
    screen: () => screen,
    type: (keys) => child.stdin.write(keys),
    exited: (ms = 30_000) => exitedWithin(done, ms, () => `zklock ${args.join(' ')} (on a terminal) did not exit within ${ms} ms; it showed: ${screen}`),
    kill: () => child.kill('SIGKILL'),
  };
}

export async function runCli(args: readonly string[], env: NodeJS.ProcessEnv = {}, ms = 30_000): Promise<{ code: number; stdout: string; stderr: string }> {
  const run = startCli(args, env);
  const code = await run.exited(ms);
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

export interface HoldEvent {
  pid: number;
  event: 'start' | 'end' | 'signal';
  t: number;
  token?: string;
  node?: string;
  signal?: string;
}

export function readEvents(log: string): HoldEvent[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as HoldEvent);
}

/** Waits until the hold fixture has logged `count` events of this kind. */
export async function waitForEvents(log: string, event: HoldEvent['event'], count = 1, ms = ROUND_TRIPS_MS): Promise<HoldEvent[]> {
  await eventually(() => readEvents(log).filter((e) => e.event === event).length >= count, ms, `${count} "${event}" event(s)`);
  return readEvents(log).filter((e) => e.event === event);
}

/** [start, end] of each hold, by the fixture's pid. */
export function intervals(log: string): { pid: number; start: number; end: number; token: string }[] {
  const events = readEvents(log);
  return events
    .filter((e) => e.event === 'start')
    .map((s) => {
      const end = events.find((e) => e.pid === s.pid && e.event === 'end');
      if (!end) throw new Error(`hold ${s.pid} never ended`);
      return { pid: s.pid, start: s.t, end: end.t, token: s.token ?? '' };
    })
    .sort((a, b) => a.start - b.start);
}

/** The most holds at the same time. */
export function maxConcurrency(spans: readonly { start: number; end: number }[]): number {
  const points = spans.flatMap((s) => [{ t: s.start, d: 1 }, { t: s.end, d: -1 }]).sort((a, b) => a.t - b.t || a.d - b.d);
  let now = 0;
  let max = 0;
  for (const p of points) max = Math.max(max, (now += p.d));
  return max;
}
