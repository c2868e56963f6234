import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { check } from './checker.js';
import type { FaultRecord, OperationRecord } from './history.js';
import type { RunSummary } from './report.js';
import { writeReport } from './report.js';
import { renderTimeline } from './timeline-svg.js';
import type { WorkerStats } from './worker.js';

/** Everything a run leaves behind, as saved in history.json: enough to check and report again. */
export interface RunHistory {
  seed: number;
  durationS: number;
  workers: number;
  logicalWorkers: number;
  sessionTimeoutMs: number;
  runStart: number;
  runEnd: number;
  operations: OperationRecord[];
  faults: FaultRecord[];
  leakedNodes: string[];
  workerStats: WorkerStats[];
}

/** Checks a history and writes history.json, report.json, report.md, timeline.svg (and .png) to `dir`. */
export function writeResults(dir: string, history: RunHistory): { summary: RunSummary; markdown: string } {
  const { operations, faults, leakedNodes, runStart, runEnd } = history;
  const result = check({ operations, faults, leakedNodes, sessionTimeoutMs: history.sessionTimeoutMs, runStart, runEnd });
  const faultsByKind: Record<string, number> = {};
  for (const fault of faults) faultsByKind[fault.kind] = (faultsByKind[fault.kind] ?? 0) + 1;
  writeFileSync(join(dir, 'history.json'), JSON.stringify(history));
  writeFileSync(join(dir, 'timeline.svg'), renderTimeline({ operations, faults, runStart, runEnd }));
  renderPng(dir);
  const summary: RunSummary = {
    seed: history.seed,
    durationS: history.durationS,
    workers: history.workers,
    logicalWorkers: history.logicalWorkers,
    sessionTimeoutMs: history.sessionTimeoutMs,
    faultsByKind,
    workerStats: history.workerStats,
    check: result,
  };
  return { summary, markdown: writeReport(dir, summary, 'timeline.svg') };
}

/** A PNG beside the SVG for people without an SVG viewer, when rsvg-convert is installed. */
function renderPng(dir: string): void {
  try {
    execFileSync('rsvg-convert', ['-o', join(dir, 'timeline.png'), join(dir, 'timeline.svg')], { stdio: 'ignore', timeout: 30_000 });
  } catch {
    // Optional: the SVG is the deliverable.
  }
}
