import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Measurement } from '../measure.js';

/** Debian's python3 (with python3-kazoo); the `python3` on PATH may be another interpreter without it. */
const PYTHON = process.env.ZKLOCK_BENCH_PYTHON ?? '/usr/bin/python3';
const SCRIPT = fileURLToPath(new URL('./kazoo_bench.py', import.meta.url));

export type KazooClientOp = 'getData' | 'setData' | 'createDelete' | 'ephemeralPair';

export type KazooSpec =
  | { scenario: 'client'; root: string; op: KazooClientOp; ops: number; depth: number; warmup: number }
  | { scenario: 'mutex'; root: string; ops: number; warmup: number }
  | { scenario: 'contend'; root: string; sessions: number; locks: number; durationMs: number; readRatio?: number };

/** [kind, ms, session]: kind 0 = an acquire resolved, 1 = `release()` called (the same shape the Node side records). */
export type LockEvent = [0 | 1, number, number];

export interface KazooResult extends Measurement {
  perSession?: number[];
  events?: LockEvent[];
  /** Set when the script had to patch kazoo to run the scenario at all. */
  note?: string;
}

interface RawResult {
  ops: number;
  wall_ms: number;
  cpu_us: number;
  per_session?: number[];
  events?: LockEvent[];
  note?: string | null;
}

/** Whether the kazoo side can run here; the reason when not (its columns are then left empty). */
export async function kazooUnavailable(): Promise<string | undefined> {
  try {
    await runPython(['-c', 'import kazoo']);
    return undefined;
  } catch (error) {
    return `kazoo skipped: ${PYTHON} cannot import kazoo (${error instanceof Error ? error.message : String(error)})`;
  }
}

/** Runs one scenario in a fresh Python process against `connectString` and parses its JSON line. */
export async function runKazoo(connectString: string, spec: KazooSpec): Promise<KazooResult> {
  const { durationMs, readRatio, ...rest } = spec as KazooSpec & { durationMs?: number; readRatio?: number };
  const wire = { ...rest, hosts: connectString, duration_ms: durationMs, read_ratio: readRatio ?? null };
  const stdout = await runPython([SCRIPT, JSON.stringify(wire)]);
  const raw = JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as RawResult;
  return { ops: raw.ops, wallMs: raw.wall_ms, cpuUs: raw.cpu_us, perSession: raw.per_session, events: raw.events, note: raw.note ?? undefined };
}

function runPython(args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(Buffer.concat(out).toString('utf8'));
      else reject(new Error(`${PYTHON} exited with ${code}: ${Buffer.concat(err).toString('utf8').trim().split('\n').slice(-3).join(' | ')}`));
    });
  });
}
