/**
 * Checks over the fenced resource's records, written apart from chaos/checker.ts so that a test
 * does not trust the code it tests. No faults are injected where these are used: every
 * operation, accepted or not, ran under a lock its holder believed it held.
 *
 * A hold runs from `acquiredAt` (the holder's clock, read as the acquire resolved) to `end` (the
 * resource's clock, before the holder releases): both read CLOCK_MONOTONIC, in every language.
 * The next holder of a lock acquires only after the previous one's node is deleted, so holds
 * that exclude one another cannot overlap even by a clock tick.
 */
import type { OperationRecord } from '../../chaos/history.js';

interface Holding {
  op: OperationRecord;
  lock: string;
  token: string;
  exclusive: boolean;
  from: number;
  to: number;
}

function holdings(operations: readonly OperationRecord[], lock: string): Holding[] {
  return operations
    .flatMap((op) => op.locks.filter((held) => held.lock === lock).map((held) => ({ op, lock, token: held.token, exclusive: held.fenced, from: op.acquiredAt, to: op.end ?? Infinity })))
    .sort((a, b) => a.from - b.from);
}

function describe(h: Holding): string {
  return `${h.op.id} (${h.op.language} ${h.op.kind}, session ${h.op.session}, token ${h.token}) [${h.from.toFixed(3)}, ${h.to.toFixed(3)}]`;
}

/** Every pair of holds of `lock` that overlap in time although one of them is exclusive. */
export function exclusionViolations(operations: readonly OperationRecord[], lock: string): string[] {
  const found: string[] = [];
  const sorted = holdings(operations, lock);
  for (let i = 0; i < sorted.length; i++) {
    const a = sorted[i]!;
    for (let j = i + 1; j < sorted.length && sorted[j]!.from < a.to; j++) {
      const b = sorted[j]!;
      if (a.exclusive || b.exclusive) found.push(`${lock}: ${describe(a)} overlaps ${describe(b)} by ${(Math.min(a.to, b.to) - b.from).toFixed(3)} ms`);
    }
  }
  return found;
}

/** Accepted fenced holds of `lock`, in the order they began, whose token is not above the one before. */
export function tokenRegressions(operations: readonly OperationRecord[], lock: string): string[] {
  const fenced = operations.filter((op) => op.accepted).flatMap((op) => op.locks.filter((held) => held.fenced && held.lock === lock).map((held) => ({ op, token: BigInt(held.token) })));
  fenced.sort((a, b) => a.op.start - b.op.start);
  const found: string[] = [];
  for (let i = 1; i < fenced.length; i++) {
    const [before, after] = [fenced[i - 1]!, fenced[i]!];
    if (after.token <= before.token) found.push(`${lock}: ${after.op.id} (${after.op.language}) began with token ${after.token} after ${before.op.id} (${before.op.language}) with ${before.token}`);
  }
  return found;
}

/** The most holds of `lock` at any one time. */
export function maxConcurrent(operations: readonly OperationRecord[], lock: string): number {
  // At equal times an end comes first: a hold that begins as another ends does not overlap it.
  const events = holdings(operations, lock)
    .flatMap((h) => [
      { at: h.from, delta: 1 },
      { at: h.to, delta: -1 },
    ])
    .sort((a, b) => a.at - b.at || a.delta - b.delta);
  let current = 0;
  let max = 0;
  for (const { delta } of events) max = Math.max(max, (current += delta));
  return max;
}
