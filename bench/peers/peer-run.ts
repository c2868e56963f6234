import { spawn } from 'node:child_process';
import type { Measurement } from '../measure.js';

/** [kind, ms, session]: kind 0 = an acquire resolved, 1 = `release()` called (the shape every side records). */
export type LockEvent = [0 | 1, number, number];

/** What a peer's process (kazoo in Python, Curator in a JVM) measured in one scenario. */
export interface PeerResult extends Measurement {
  perSession?: number[];
  events?: LockEvent[];
  /** Set when the peer had to be patched to run the scenario at all. */
  note?: string;
}

/** The one JSON line a peer process prints last. */
interface RawResult {
  ops: number;
  wall_ms: number;
  cpu_us: number;
  per_session?: number[];
  events?: LockEvent[];
  note?: string | null;
}

/** A peer's run is a few seconds to a minute; one that runs this long is stuck, and is killed. */
const PEER_TIMEOUT_MS = 10 * 60_000;

/** Runs a peer's process to its end and parses the JSON line it printed last. */
export async function runPeer(file: string, args: readonly string[]): Promise<PeerResult> {
  const stdout = await runProcess(file, args, PEER_TIMEOUT_MS);
  const last = stdout.trim().split('\n').at(-1) ?? '';
  let raw: RawResult;
  try {
    raw = JSON.parse(last) as RawResult;
  } catch (error) {
    throw new Error(`${file} printed no result line: ${last.slice(0, 200)}`, { cause: error });
  }
  return { ops: raw.ops, wallMs: raw.wall_ms, cpuUs: raw.cpu_us, perSession: raw.per_session, events: raw.events, note: raw.note ?? undefined };
}

/** Runs `file` and resolves with its stdout; rejects with the end of its stderr when it fails or outlives `timeoutMs`. */
export function runProcess(file: string, args: readonly string[], timeoutMs = PEER_TIMEOUT_MS): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs, killSignal: 'SIGKILL' });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolve(Buffer.concat(out).toString('utf8'));
      else reject(new Error(`${file} ${signal === 'SIGKILL' ? `was killed after ${timeoutMs} ms` : `exited with ${code}`}: ${Buffer.concat(err).toString('utf8').trim().split('\n').slice(-3).join(' | ')}`));
    });
  });
}
