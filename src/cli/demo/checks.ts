import type { HoldRecord } from './record.js';

export interface CheckResult {
  name: string;
  ok: boolean;
  detail: string;
}

/** No two holders at once: sorted by start, every hold begins after the previous one ended. */
export function checkNoOverlap(lock: string, records: readonly HoldRecord[]): CheckResult {
  const holds = records.filter((r) => r.lock === lock).sort((a, b) => a.start - b.start);
  for (let i = 1; i < holds.length; i++) {
    const prev = holds[i - 1] as HoldRecord;
    const next = holds[i] as HoldRecord;
    if (next.start < prev.end) {
      return { name: `${lock}: one holder at a time`, ok: false, detail: `${next.worker} started ${(prev.end - next.start).toFixed(1)} ms before ${prev.worker} ended` };
    }
  }
  return { name: `${lock}: one holder at a time`, ok: true, detail: `${holds.length} holds, none overlapping` };
}

/** Fencing tokens grow with every acquisition, in the order the holds happened. */
export function checkTokensIncrease(lock: string, records: readonly HoldRecord[]): CheckResult {
  const holds = records.filter((r) => r.lock === lock).sort((a, b) => a.start - b.start);
  for (let i = 1; i < holds.length; i++) {
    const prev = BigInt((holds[i - 1] as HoldRecord).token);
    const next = BigInt((holds[i] as HoldRecord).token);
    if (next <= prev) return { name: `${lock}: fencing tokens increase`, ok: false, detail: `token ${next} came after ${prev}` };
  }
  const first = holds[0]?.token ?? '-';
  const last = holds.at(-1)?.token ?? '-';
  return { name: `${lock}: fencing tokens increase`, ok: true, detail: `${first} … ${last}` };
}

export function checkNoNodeLeft(lock: string, children: readonly string[] | undefined): CheckResult {
  const name = `${lock}: no node left`;
  if (children === undefined) return { name, ok: true, detail: 'the lock path is gone (container reaped)' };
  return children.length === 0 ? { name, ok: true, detail: 'empty' } : { name, ok: false, detail: `left: ${children.join(', ')}` };
}

/** The point of killing the leader: locks kept being acquired after it died. */
export function checkWorkContinued(records: readonly HoldRecord[], leaderKilledAt: number | undefined): CheckResult {
  const name = 'work continued after the leader was killed';
  if (leaderKilledAt === undefined) return { name, ok: false, detail: 'the leader was not killed' };
  const after = records.filter((r) => r.start > leaderKilledAt).length;
  return { name, ok: after > 0, detail: `${after} holds after the kill` };
}
