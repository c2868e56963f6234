import type { FaultRecord, OperationRecord } from './history.js';
import { EXCLUSIVE_PATHS, LOCKS, isPeer, isWorkerFault, sessionEndTest } from './history.js';
import type { Interval } from './history.js';
import type { FaultKindSummary } from './fault-summary.js';
import { summarizeByKind, worst } from './fault-summary.js';
import type { LostLease } from './lost-leases.js';
import { lostLeases } from './lost-leases.js';

export interface Overlap {
  lock: string;
  a: string;
  b: string;
  fromMs: number;
  toMs: number;
  /**
   * 'signal': one side's lease signal had aborted by the time the overlap began; 'paused': one
   * side's process was SIGSTOPped during its operation; 'peer': the side that held first (the
   * stale one) is a Curator or kazoo worker, which has no signal to stop on; undefined: unexcused.
   */
  excuse?: 'signal' | 'paused' | 'peer';
  /** For an unexcused overlap: when each side's signal fired, if it did, relative to the overlap's start. */
  note?: string;
}

export interface Recovery {
  kind: string;
  target: string;
  /** Seconds from the start of the run. */
  atS: number;
  faultMs: number;
  /** From the heal to the next accepted operation of anyone (of the target worker for worker faults). */
  resumeMs: number | null;
  /** The longest time without any accepted operation between the fault's start and that resumption. */
  stallMs: number | null;
}

export interface CheckResult {
  operations: number;
  /** Operations per library (zklock, curator, kazoo). */
  byLanguage: Record<string, number>;
  accepted: number;
  rejectedByFence: number;
  /** (1) accepted operations overlapping on a fenced lock, or tokens not increasing in acceptance order. */
  fencingViolations: string[];
  /** (2, 3) holds that broke exclusion (mutex, multi, write vs anyone) or the semaphore bound. */
  overlaps: Overlap[];
  unexcusedOverlaps: number;
  /** (3) the most concurrent semaphore operations, all and not counting excused ones. */
  semaphoreMax: { all: number; unexcused: number; bound: number };
  lostSignals: Record<string, number>;
  /** (6) every zklock lease lost during an operation, with its margin over the next acquisition. */
  lostLeases: LostLease[];
  lostLeaseViolations: number;
  /** Per fault kind: count, worst stall and resumption, violations, lost-lease margins. */
  byKind: FaultKindSummary[];
  /** (4) contender nodes still there once every worker had closed. */
  leakedNodes: string[];
  /** (5) recovery after each fault. */
  recoveries: Recovery[];
  worstRecoveryMs: number | null;
  worstStallMs: number | null;
  sessionTimeoutMs: number;
  ok: boolean;
}

export interface CheckInput {
  operations: readonly OperationRecord[];
  faults: readonly FaultRecord[];
  leakedNodes: string[];
  sessionTimeoutMs: number;
  runStart: number;
  runEnd: number;
}

export function check(input: CheckInput): CheckResult {
  const ops: Interval[] = input.operations.map((op) => ({ ...op, end: op.end ?? input.runEnd }));
  /** Whether `op`'s process was SIGSTOPped during its hold, by `by` at the latest. */
  const pausedDuring = (op: Interval, by = op.end): boolean =>
    input.faults.some((f) => f.kind === 'pause-worker' && f.target === op.process && f.start < op.end && f.start <= by && f.end > op.acquiredAt);
  /** Why `op` may legitimately still run at `at`: its signal had told it, or it was stopped (by then) and could not know. */
  const excuseOf = (op: Interval, at: number): Overlap['excuse'] => {
    if (op.lostAt !== undefined && op.lostAt <= at) return 'signal';
    return pausedDuring(op, at) ? 'paused' : undefined;
  };
  const sessionEnded = sessionEndTest(ops);
  /**
   * A Curator or kazoo holder cannot learn its lease is gone and stop. It is excused as 'peer'
   * only when its session did end (its next operation ran on another session) and a fault that could end it was in force during its hold (up to a session
   * timeout after the heal): any ensemble fault, or a worker fault on its own process. Otherwise
   * a peer in an overlap is a finding like any other.
   */
  const peerExcuse = (op: Interval): Overlap['excuse'] =>
    isPeer(op) &&
    sessionEnded(op) &&
    input.faults.some((f) => (!isWorkerFault(f) || f.target === op.process) && f.start < op.end && f.end + input.sessionTimeoutMs > op.acquiredAt)
      ? 'peer'
      : undefined;
  const overlaps: Overlap[] = [];
  const fencingViolations: string[] = [];
  for (const lock of EXCLUSIVE_PATHS) {
    const onLock = ops.filter((op) => op.locks.some((l) => l.lock === lock));
    overlaps.push(...exclusionBreaks(lock, onLock, excuseOf, peerExcuse));
    fencingViolations.push(...fencingBreaks(lock, onLock));
  }
  // Held from the acquire on; a lost lease stops counting once its signal told its holder.
  const semaphoreOps = ops.filter((op) => op.kind === 'semaphore');
  const all = maxConcurrent(semaphoreOps.map((op) => [op.acquiredAt, op.end]));
  const unexcused = maxConcurrent(
    semaphoreOps.filter((op) => !pausedDuring(op) && peerExcuse(op) === undefined).map((op) => [op.acquiredAt, Math.min(op.end, op.lostAt ?? op.end)]),
  );
  const lostSignals = countBy(ops.flatMap((op) => (op.lost === undefined ? [] : [op.lost])));
  const recoveries = input.faults.map((fault) => recovery(fault, ops, input.runStart));
  const unexcusedOverlaps = overlaps.filter((o) => o.excuse === undefined).length;
  const semaphoreBroken = unexcused > LOCKS.semaphoreSize;
  const lost = lostLeases(ops, input.faults, input.runStart, input.sessionTimeoutMs, sessionEnded);
  const lostLeaseViolations = lost.filter((l) => l.violation).length;
  return {
    operations: ops.length,
    byLanguage: countBy(ops.map((op) => op.language)),
    accepted: ops.filter((op) => op.accepted).length,
    rejectedByFence: ops.filter((op) => op.rejected !== undefined).length,
    fencingViolations,
    overlaps,
    unexcusedOverlaps,
    semaphoreMax: { all, unexcused, bound: LOCKS.semaphoreSize },
    lostSignals,
    lostLeases: lost,
    lostLeaseViolations,
    byKind: summarizeByKind({ faults: input.faults, recoveries, overlaps, lostLeases: lost, sessionTimeoutMs: input.sessionTimeoutMs }),
    leakedNodes: input.leakedNodes,
    recoveries,
    worstRecoveryMs: worst(recoveries.map((r) => r.resumeMs)),
    worstStallMs: worst(recoveries.map((r) => r.stallMs)),
    sessionTimeoutMs: input.sessionTimeoutMs,
    ok:
      fencingViolations.length === 0 &&
      unexcusedOverlaps === 0 &&
      lostLeaseViolations === 0 &&
      !semaphoreBroken &&
      input.leakedNodes.length === 0 &&
      ops.length > 0,
  };
}

/**
 * Pairs of operations on `lock` that held it together when at least one needed it alone, each
 * held from its acquire (not from its first call to the resource, which a loaded machine may
 * delay past the other's end). Of the two, the one that acquired first is the stale holder (the
 * other could only get in once its node was gone), so only that one may be excused as a peer.
 */
function exclusionBreaks(
  lock: string,
  onLock: readonly Interval[],
  excuseOf: (op: Interval, at: number) => Overlap['excuse'],
  peerExcuse: (op: Interval) => Overlap['excuse'],
): Overlap[] {
  const sorted = [...onLock].sort((x, y) => x.acquiredAt - y.acquiredAt);
  const found: Overlap[] = [];
  for (let i = 0; i < sorted.length; i++) {
    const a = sorted[i] as Interval;
    for (let j = i + 1; j < sorted.length && (sorted[j] as Interval).acquiredAt < a.end; j++) {
      const b = sorted[j] as Interval;
      if (a.kind === 'read' && b.kind === 'read') continue;
      const overlap: Overlap = { lock, a: a.id, b: b.id, fromMs: b.acquiredAt, toMs: Math.min(a.end, b.end) };
      const excuse = excuseOf(a, overlap.fromMs) ?? excuseOf(b, overlap.fromMs) ?? peerExcuse(a);
      if (excuse) overlap.excuse = excuse;
      else overlap.note = [a, b].map((op) => `${op.id} ${op.lost === undefined ? 'not signalled' : `${op.lost} at +${Math.round((op.lostAt ?? 0) - overlap.fromMs)} ms`}`).join('; ');
      found.push(overlap);
    }
  }
  return found;
}

/** Check (1): accepted operations on a fenced lock never overlap at the resource, and their tokens strictly increase. */
function fencingBreaks(lock: string, onLock: readonly Interval[]): string[] {
  const accepted = [...onLock].sort((x, y) => x.start - y.start).filter((op) => op.accepted && op.locks.some((l) => l.lock === lock && l.fenced));
  const problems: string[] = [];
  for (let i = 1; i < accepted.length; i++) {
    const previous = accepted[i - 1] as Interval;
    const current = accepted[i] as Interval;
    const tokenOf = (op: Interval): bigint => BigInt(op.locks.find((l) => l.lock === lock)?.token ?? '0');
    if (current.start < previous.end) problems.push(`${lock}: accepted ${current.id} began while accepted ${previous.id} was running`);
    if (tokenOf(current) <= tokenOf(previous)) problems.push(`${lock}: token ${tokenOf(current)} of ${current.id} after ${tokenOf(previous)} of ${previous.id}`);
  }
  return problems;
}

function countBy(keys: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const key of keys) counts[key] = (counts[key] ?? 0) + 1;
  return counts;
}

/** The most of `[from, to)` spans open at once. */
function maxConcurrent(spans: readonly (readonly [number, number])[]): number {
  // Ends sort before starts at the same instant: back-to-back holds do not count as concurrent.
  const events = spans.flatMap(([from, to]) => [{ t: from, d: 1 }, { t: to, d: -1 }]).sort((x, y) => x.t - y.t || x.d - y.d);
  let current = 0;
  let max = 0;
  for (const event of events) max = Math.max(max, (current += event.d));
  return max;
}

function recovery(fault: FaultRecord, ops: readonly Interval[], runStart: number): Recovery {
  const workerFault = isWorkerFault(fault);
  const relevant = ops.filter((op) => op.accepted && (!workerFault || op.process === fault.target)).map((op) => op.start);
  const resumedAt = relevant.filter((t) => t >= fault.end).sort((x, y) => x - y)[0];
  let stallMs: number | null = null;
  if (resumedAt !== undefined) {
    const starts = ops.filter((op) => op.accepted).map((op) => op.start);
    const inside = [fault.start, ...starts.filter((t) => t > fault.start && t < resumedAt), resumedAt].sort((x, y) => x - y);
    stallMs = Math.max(...inside.slice(1).map((t, i) => t - (inside[i] as number)));
  }
  return {
    kind: fault.kind,
    target: fault.target,
    atS: (fault.start - runStart) / 1000,
    faultMs: Math.round(fault.end - fault.start),
    resumeMs: resumedAt === undefined ? null : Math.round(resumedAt - fault.end),
    stallMs: stallMs === null ? null : Math.round(stallMs),
  };
}
