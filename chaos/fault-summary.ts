import type { Overlap, Recovery } from './checker.js';
import type { FaultRecord } from './history.js';
import type { LostLease } from './lost-leases.js';
import { faultAt } from './lost-leases.js';

/** What one kind of fault did over a run. */
export interface FaultKindSummary {
  /** A fault kind, or `none` for lost leases outside every fault's window. */
  kind: string;
  count: number;
  worstStallMs: number | null;
  worstResumeMs: number | null;
  /** Unexcused overlaps that began in a window of this kind, plus lost leases that broke their promise there. */
  violations: number;
  lostLeases: number;
  /** Lost leases nobody else acquired after, before the run ended (no margin to measure). */
  unchallenged: number;
  /** Margin (next other acquisition − signal) over the lost leases of this kind, ms. */
  marginMs: Spread | null;
  /** The same over the leases whose session did end: the margin the lease monitor's promise is about. */
  endedMarginMs: Spread | null;
}

export interface Spread {
  n: number;
  min: number;
  p10: number;
  p50: number;
  max: number;
}

export interface SummaryInput {
  faults: readonly FaultRecord[];
  recoveries: readonly Recovery[];
  overlaps: readonly Overlap[];
  lostLeases: readonly LostLease[];
  sessionTimeoutMs: number;
}

export function summarizeByKind(input: SummaryInput): FaultKindSummary[] {
  const kindAt = (at: number): string => faultAt(input.faults, at, input.sessionTimeoutMs)?.kind ?? 'none';
  const unexcused = input.overlaps.filter((o) => o.excuse === undefined);
  const kinds = [...new Set([...input.faults.map((f) => f.kind as string), ...input.lostLeases.map((l) => l.fault), ...unexcused.map((o) => kindAt(o.fromMs))])];
  return kinds.map((kind) => {
    const recoveries = input.recoveries.filter((r) => r.kind === kind);
    const leases = input.lostLeases.filter((l) => l.fault === kind);
    const overlapsHere = unexcused.filter((o) => kindAt(o.fromMs) === kind);
    const measured = leases.filter((l) => l.marginMs !== null && l.excuse === undefined);
    return {
      kind,
      count: recoveries.length,
      worstStallMs: worst(recoveries.map((r) => r.stallMs)),
      worstResumeMs: worst(recoveries.map((r) => r.resumeMs)),
      violations: overlapsHere.length + leases.filter((l) => l.violation).length,
      lostLeases: leases.length,
      unchallenged: leases.filter((l) => l.marginMs === null).length,
      marginMs: spread(measured.map((l) => l.marginMs as number)),
      endedMarginMs: spread(measured.filter((l) => l.sessionEnded).map((l) => l.marginMs as number)),
    };
  });
}

export function worst(times: readonly (number | null)[]): number | null {
  const known = times.filter((t): t is number => t !== null);
  return known.length > 0 ? Math.max(...known) : null;
}

function spread(values: readonly number[]): Spread | null {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  return { n: sorted.length, min: sorted[0] as number, p10: quantile(sorted, 0.1), p50: quantile(sorted, 0.5), max: sorted.at(-1) as number };
}

/** Nearest-rank quantile of an ascending, non-empty list. */
function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}
