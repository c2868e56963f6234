import type { FaultRecord, Interval } from './history.js';
import { EXCLUSIVE_PATHS, isPeer } from './history.js';

/**
 * The promise a zklock lease makes: its signal aborts before the server can hand the lock to
 * anyone else. For every lease lost during an operation, this is when it said so, and when the
 * next other worker (any session, ours included) acquired a conflicting hold on one of its locks.
 */
export interface LostLease {
  op: string;
  process: string;
  session: string;
  reason: string;
  /** Milliseconds from the start of the run. */
  lostAtS: number;
  /** The next conflicting acquisition by another worker (any session, any language), if any came before the run ended. */
  next?: { op: string; language: string; session: string; lock: string; acquiredAtS: number };
  /** next.acquiredAt − lostAt in ms: negative breaks the promise. Null when nobody acquired after. */
  marginMs: number | null;
  /**
   * Whether the holder's session ended (the worker's next operation ran on another session):
   * the server could hand the lock on by itself. Otherwise the lease was given up early, the
   * session lived on, and the next holder came after the release, often milliseconds after.
   */
  sessionEnded: boolean;
  /** The fault in force when the lease was lost (from its start to one session timeout after its heal), or `none`. */
  fault: string;
  /** Set when the lease's process was SIGSTOPped meanwhile: a stopped process cannot keep any promise (the fence must). */
  excuse?: 'paused';
  violation: boolean;
  /** For a violation: the events of both operations and the fault, in order. */
  timeline?: string[];
}

export function lostLeases(
  ops: readonly Interval[],
  faults: readonly FaultRecord[],
  runStart: number,
  sessionTimeoutMs: number,
  sessionEnded: (op: Interval) => boolean,
): LostLease[] {
  const seconds = (t: number): number => Math.round(t - runStart) / 1000;
  const found: LostLease[] = [];
  for (const op of ops) {
    if (isPeer(op) || op.lost === undefined || op.lostAt === undefined) continue;
    const lostAt = op.lostAt;
    const next = nextConflicting(op, ops);
    const marginMs = next === undefined ? null : Math.round((next.other.acquiredAt - lostAt) * 10) / 10;
    const fault = faultAt(faults, lostAt, sessionTimeoutMs);
    const paused = faults.some((f) => f.kind === 'pause-worker' && f.target === op.process && f.start < (next?.other.acquiredAt ?? op.end) && f.end > op.acquiredAt);
    const lease: LostLease = {
      op: op.id,
      process: op.process,
      session: op.session,
      reason: op.lost,
      lostAtS: seconds(lostAt),
      sessionEnded: sessionEnded(op),
      marginMs,
      fault: fault?.kind ?? 'none',
      violation: marginMs !== null && marginMs < 0 && !paused,
    };
    if (next !== undefined) {
      lease.next = { op: next.other.id, language: next.other.language, session: next.other.session, lock: next.lock, acquiredAtS: seconds(next.other.acquiredAt) };
    }
    if (paused) lease.excuse = 'paused';
    if (lease.violation && next !== undefined) lease.timeline = timeline(op, lostAt, next.other, fault, seconds);
    found.push(lease);
  }
  return found;
}

/**
 * The earliest acquisition after `op`'s, by another worker, of a hold that conflicts with it on
 * one of its locks. A logical worker that shares `op`'s session counts: it must not get in
 * while `op` still holds either.
 */
function nextConflicting(op: Interval, ops: readonly Interval[]): { other: Interval; lock: string } | undefined {
  let best: { other: Interval; lock: string } | undefined;
  for (const { lock } of op.locks) {
    if (!EXCLUSIVE_PATHS.includes(lock)) continue;
    for (const other of ops) {
      if (other.worker === op.worker || other.acquiredAt <= op.acquiredAt) continue;
      if (op.kind === 'read' && other.kind === 'read') continue;
      if (!other.locks.some((l) => l.lock === lock)) continue;
      if (best === undefined || other.acquiredAt < best.other.acquiredAt) best = { other, lock };
    }
  }
  return best;
}

/** The latest-starting fault whose window (start to one session timeout after its heal) holds `at`. */
export function faultAt(faults: readonly FaultRecord[], at: number, sessionTimeoutMs: number): FaultRecord | undefined {
  let found: FaultRecord | undefined;
  for (const fault of faults) {
    if (fault.start <= at && at <= fault.end + sessionTimeoutMs && (found === undefined || fault.start > found.start)) found = fault;
  }
  return found;
}

function timeline(op: Interval, lostAt: number, other: Interval, fault: FaultRecord | undefined, seconds: (t: number) => number): string[] {
  const events: [number, string][] = [
    [op.acquiredAt, `${op.id} (${op.session}) acquired`],
    [op.start, `${op.id} began`],
    [lostAt, `${op.id} signalled ${op.lost ?? ''}`],
    [op.end, `${op.id} ended`],
    [other.acquiredAt, `${other.id} (${other.language}, ${other.session}) acquired`],
    [other.start, `${other.id} began`],
    [other.end, `${other.id} ended`],
  ];
  if (fault !== undefined) events.push([fault.start, `${fault.kind} on ${fault.target} began`], [fault.end, `${fault.kind} healed`]);
  return events.sort(([a], [b]) => a - b).map(([t, what]) => `${seconds(t).toFixed(3)} s ${what}`);
}
