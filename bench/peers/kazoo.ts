import { fileURLToPath } from 'node:url';
import type { PeerContention, PeerHerd, PeerLongQueue, PeerResult } from './peer-run.js';
import { runPeer, wireSpec } from './peer-run.js';
import { runProcess } from '../run-process.js';

/** Debian's python3 (with python3-kazoo); the `python3` on PATH may be another interpreter without it. */
const PYTHON = process.env.ZKLOCK_BENCH_PYTHON ?? '/usr/bin/python3';
const SCRIPT = fileURLToPath(new URL('./kazoo_bench.py', import.meta.url));

export type KazooClientOp = 'getData' | 'setData' | 'createDelete' | 'ephemeralPair';

export type KazooSpec =
  | { scenario: 'client'; root: string; op: KazooClientOp; ops: number; depth: number; warmup: number }
  | { scenario: 'mutex'; root: string; ops: number; warmup: number }
  | PeerContention
  | PeerHerd
  | PeerLongQueue;

/** Whether the kazoo side can run here; the reason when not (its columns are then left empty). */
export async function kazooUnavailable(): Promise<string | undefined> {
  try {
    await runProcess(PYTHON, ['-c', 'import kazoo']);
    return undefined;
  } catch (error) {
    return `kazoo skipped: ${PYTHON} cannot import kazoo (${error instanceof Error ? error.message : String(error)})`;
  }
}

/** Runs one scenario in a fresh Python process against `connectString` and parses its JSON line. */
export async function runKazoo(connectString: string, spec: KazooSpec, timeoutMs?: number): Promise<PeerResult> {
  return runPeer(PYTHON, [SCRIPT, JSON.stringify(wireSpec(connectString, spec))], timeoutMs);
}
