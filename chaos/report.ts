import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CheckResult } from './checker.js';
import type { Spread } from './fault-summary.js';
import type { WorkerStats } from './worker.js';

export interface RunSummary {
  seed: number;
  durationS: number;
  workers: number;
  logicalWorkers: number;
  sessionTimeoutMs: number;
  faultsByKind: Record<string, number>;
  workerStats: WorkerStats[];
  check: CheckResult;
}

const FENCING_POLICY = [
  '- **Mutex and multi-lock**: every lock path is fenced on its own with its lease\'s token (the contender node\'s czxid); a multi-lock operation carries one token per path.',
  '- **Read/write lock**: only writers are fenced (they are exclusive, so their tokens must increase); readers change nothing, so they are recorded, not fenced, and checked for never running beside a writer.',
  '- **Semaphore**: not fenced. Up to N holders are legitimately concurrent, so no single "highest token" can order them; the check is that no more than N ran at once.',
  '- An operation begins (fenced: token must be ≥ the highest seen on that path) and ends (fenced again: rejected if a newer token began meanwhile), so a stale holder never commits over a newer one.',
  '- Holds are compared from the moment each acquire resolved, not from the first call to the resource. An overlap is *excused* when one side\'s lease signal had already aborted when the overlap began (a well-behaved client stops there), or its process was SIGSTOPped during its operation (no client can notice while stopped; the fence must, and check 1 verifies it did). A signal that fires only after another holder got in is an exception: the lease monitor promised to give up before the server could expire the session.',
  '- **Peers** (Curator, kazoo) have no signal to stop on. Their fenced writes go through the same resource and count in check 1 like ours; an overlap in which the peer is the stale side (it acquired first) is excused as *peer* only when its session did end and a fault that could end it (any ensemble fault, or a worker fault on its own process) was in force during its hold; otherwise it is unexcused.',
  '- **(6) Lost leases**: for every zklock lease whose signal aborted during an operation, the next conflicting acquisition by another worker must come after the signal. Leases of a SIGSTOPped process are listed apart: a stopped process keeps no promise, and the fence (check 1) covers it.',
].join('\n');

/** Writes report.json and report.md to `dir`; returns the markdown. */
export function writeReport(dir: string, summary: RunSummary, svgName: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'report.json'), `${JSON.stringify(summary, null, 2)}\n`);
  const markdown = renderMarkdown(summary, svgName);
  writeFileSync(join(dir, 'report.md'), markdown);
  return markdown;
}

function renderMarkdown(s: RunSummary, svgName: string): string {
  const c = s.check;
  const acquisitions = s.workerStats.reduce((sum, w) => sum + w.acquisitions, 0);
  const errors: Record<string, number> = {};
  for (const w of s.workerStats) for (const [code, n] of Object.entries(w.acquireErrors)) errors[code] = (errors[code] ?? 0) + n;
  const excused = (kind: string): number => c.overlaps.filter((o) => o.excuse === kind).length;
  const lines = [
    `# Chaos run: seed ${s.seed}, ${s.durationS} s — ${c.ok ? 'PASS' : 'FAIL'}`,
    '',
    `${s.workers} worker processes (${s.logicalWorkers} logical workers), session timeout ${s.sessionTimeoutMs} ms, 3-member ensemble.`,
    '',
    '| figure | value |',
    '|---|---|',
    `| acquisitions | ${acquisitions} |`,
    `| operations recorded / accepted / rejected by the fence | ${c.operations} / ${c.accepted} / ${c.rejectedByFence} |`,
    `| operations by library | ${formatCounts(c.byLanguage)} |`,
    `| acquire errors | ${formatCounts(errors)} |`,
    `| faults injected | ${formatCounts(s.faultsByKind)} |`,
    `| (1) fencing violations | ${c.fencingViolations.length} |`,
    `| (2) overlaps: excused by signal / by pause / peer after a fault / **unexcused** | ${excused('signal')} / ${excused('paused')} / ${excused('peer')} / **${c.unexcusedOverlaps}** |`,
    `| lease signals that aborted during an operation | ${formatCounts(c.lostSignals)} |`,
    `| (3) semaphore most concurrent (all / unexcused / bound) | ${c.semaphoreMax.all} / ${c.semaphoreMax.unexcused} / ${c.semaphoreMax.bound} |`,
    `| (6) zklock leases lost during an operation / aborted before the next acquisition / **after it** / in a paused process / never challenged | ${lostLine(c.lostLeases)} |`,
    `| (4) leaked contender nodes | ${c.leakedNodes.length}${c.leakedNodes.length ? `: ${c.leakedNodes.join(', ')}` : ''} |`,
    `| (5) worst resumption after a heal / worst stall | ${ms(c.worstRecoveryMs)} / ${ms(c.worstStallMs)} (session timeout ${s.sessionTimeoutMs} ms) |`,
    '',
    `![timeline](${svgName})`,
    '',
    '## Fencing policy',
    '',
    FENCING_POLICY,
    '',
    '## By fault kind',
    '',
    'Margin: from the moment a lost zklock lease\'s signal aborted to the next acquisition of a conflicting hold on that lock by any other worker (any language; a logical worker on the same session counts); it must be positive. A lease belongs to the fault in force when it was lost (from the fault\'s start to one session timeout after its heal). Where the session lived on, the lease was given up early and the next holder came right after its release, so the margin can be a few milliseconds; where the session ended, the server itself handed the lock on, and the margin is what the lease monitor promised.',
    '',
    '| fault | count | worst stall | worst resumption | violations | lost leases (unchallenged) | margin min / p10 / p50 / max | where the session ended: n, min / p10 / p50 / max |',
    '|---|---|---|---|---|---|---|---|',
    ...c.byKind.map(
      (k) =>
        `| ${k.kind} | ${k.count} | ${ms(k.worstStallMs)} | ${ms(k.worstResumeMs)} | ${k.violations} | ${k.lostLeases} (${k.unchallenged}) | ${spread(k.marginMs)} | ${k.endedMarginMs === null ? '—' : `${k.endedMarginMs.n}, ${spread(k.endedMarginMs)}`} |`,
    ),
    '',
    '## Recovery after each fault',
    '',
    'Resumption: from the heal to the next accepted operation (of the faulted worker, for worker faults). Stall: the longest time with no accepted operation at all, from the fault\'s start to that resumption.',
    '',
    '| at | fault | target | fault lasted | resumed after heal | longest stall | stall / session timeout |',
    '|---|---|---|---|---|---|---|',
    ...c.recoveries.map((r) => `| ${r.atS.toFixed(1)} s | ${r.kind} | ${r.target} | ${ms(r.faultMs)} | ${ms(r.resumeMs)} | ${ms(r.stallMs)} | ${r.stallMs === null ? '—' : (r.stallMs / s.sessionTimeoutMs).toFixed(2)} |`),
    '',
  ];
  const broken = c.lostLeases.filter((l) => l.violation);
  if (broken.length > 0) {
    lines.push('## Lost leases signalled after another session acquired', '');
    for (const l of broken.slice(0, 20)) lines.push(`- ${l.op} (${l.reason}, during ${l.fault}): margin ${l.marginMs} ms`, ...(l.timeline ?? []).map((e) => `  - ${e}`));
    lines.push('');
  }
  if (c.fencingViolations.length > 0) lines.push('## Fencing violations', '', ...c.fencingViolations.slice(0, 50).map((v) => `- ${v}`), '');
  const unexcused = c.overlaps.filter((o) => o.excuse === undefined);
  if (unexcused.length > 0) lines.push('## Unexcused overlaps', '', ...unexcused.slice(0, 50).map((o) => `- ${o.lock}: ${o.a} and ${o.b} for ${ms(o.toMs - o.fromMs)} (${o.note ?? ''})`), '');
  return lines.join('\n');
}

function spread(s: Spread | null): string {
  return s === null ? '—' : `${[s.min, s.p10, s.p50, s.max].map((v) => Math.round(v)).join(' / ')} ms`;
}

function lostLine(leases: CheckResult['lostLeases']): string {
  const count = (keep: (l: CheckResult['lostLeases'][number]) => boolean): number => leases.filter(keep).length;
  return [
    leases.length,
    count((l) => l.excuse === undefined && l.marginMs !== null && l.marginMs >= 0),
    `**${count((l) => l.violation)}**`,
    count((l) => l.excuse === 'paused'),
    count((l) => l.marginMs === null),
  ].join(' / ');
}

function formatCounts(counts: Record<string, number>): string {
  const entries = Object.entries(counts).sort(([a], [b]) => a.localeCompare(b));
  return entries.length === 0 ? 'none' : entries.map(([k, n]) => `${k} ${n}`).join(', ');
}

function ms(value: number | null): string {
  return value === null ? '—' : `${Math.round(value)} ms`;
}
