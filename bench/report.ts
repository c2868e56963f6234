import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { renderChart } from './chart-svg.js';
import type { BenchConfig } from './config.js';
import type { Measurement } from './measure.js';
import { cpuPerOp, perSecond } from './measure.js';

export type Peer = 'zklock' | 'curator' | 'nzk' | 'kazoo';
export const PEERS: readonly Peer[] = ['zklock', 'curator', 'nzk', 'kazoo'];
/** The peers zklock is compared with, in the table's ratio columns. */
const OTHERS = ['curator', 'nzk', 'kazoo'] as const;
/** The same, for takeTurns: a row goes on without one of them whose run failed. */
export const OTHER_LIBRARIES: ReadonlySet<string> = new Set(OTHERS);

/** One measured value; `cpuUsPerOp` is the client process's CPU per operation. */
export interface Sample {
  value: number;
  cpuUsPerOp?: number;
  /** Smallest and largest over the rounds, when `value` is their median. */
  range?: { min: number; max: number };
  detail?: Record<string, unknown>;
  /** Why this library's run of the row failed (`value` is then NaN): its cell says so, the notes say why. */
  failed?: string;
}

/** A throughput sample (ops/s) with the client CPU per operation. */
export function sampleOf(m: Measurement): Sample {
  return { value: perSecond(m), cpuUsPerOp: cpuPerOp(m), detail: { ops: m.ops, wallMs: m.wallMs, cpuUs: m.cpuUs } };
}

export interface Row {
  group: string;
  scenario: string;
  unit: string;
  /** Throughputs are better higher, latencies lower; the speed-up columns follow it. */
  better: 'higher' | 'lower';
  samples: Partial<Record<Peer, Sample>>;
  goal?: { text: string; met: boolean };
  /** False for a row whose values are no speed (a count held against a bound): no ratio columns. */
  compare?: false;
  /** Printed under the table, e.g. how a peer had to be patched to run this row. */
  note?: string;
}

export interface Report {
  startedAt: string;
  config: Omit<BenchConfig, 'only'> & { only: string[] };
  environment: Record<string, unknown>;
  notes: string[];
  rows: Row[];
}

/** zklock's advantage over `peer` on this row: > 1 means zklock is better, whichever way the unit runs. */
export function speedup(row: Row, peer: Peer): number | undefined {
  if (row.compare === false) return undefined;
  const ours = row.samples.zklock?.value;
  const theirs = row.samples[peer]?.value;
  if (ours === undefined || theirs === undefined || !(ours > 0) || !(theirs > 0)) return undefined;
  return row.better === 'higher' ? ours / theirs : theirs / ours;
}

function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (Math.abs(value) >= 100) return Math.round(value).toLocaleString('en-US');
  return value.toPrecision(3);
}

function formatSample(sample: Sample | undefined, unit: string): string {
  if (!sample) return '—';
  if (sample.failed !== undefined) return 'failed';
  const range = sample.range && sample.range.min !== sample.range.max ? ` [${formatNumber(sample.range.min)}–${formatNumber(sample.range.max)}]` : '';
  const value = `${formatNumber(sample.value)}${range} ${unit}`;
  return sample.cpuUsPerOp === undefined ? value : `${value} (${formatNumber(sample.cpuUsPerOp)} µs cpu)`;
}

export function renderTable(rows: readonly Row[]): string {
  const header = ['scenario', 'zklock', 'Curator 5.4', 'node-zookeeper-client', 'kazoo', '×curator', '×nzk', '×kazoo', 'goal'];
  const body = rows.map((row) => [
    `${row.group}: ${row.scenario}`,
    ...PEERS.map((peer) => formatSample(row.samples[peer], row.unit)),
    ...OTHERS.map((peer) => {
      const ratio = speedup(row, peer);
      return ratio === undefined ? '' : `${ratio.toFixed(2)}×`;
    }),
    row.goal ? `${row.goal.met ? 'met' : 'MISSED'}: ${row.goal.text}` : '',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((cells) => cells[i]!.length)));
  const line = (cells: readonly string[]): string => cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('-|-'), ...body.map(line)].join('\n');
}

/** Writes `bench/results/<timestamp>.json` and `.svg`, and `latest.json` and `latest.svg`; returns the first path. */
export async function writeReport(report: Report): Promise<string> {
  const dir = fileURLToPath(new URL('./results/', import.meta.url));
  await mkdir(dir, { recursive: true });
  const json = `${JSON.stringify(report, null, 2)}\n`;
  const svg = `${renderChart(report.rows, `zklock bench ${report.startedAt} (${report.config.mode} run; ${report.config.fsync ? 'forceSync=yes' : 'forceSync=no'})`)}\n`;
  const base = `${dir}${report.startedAt.replaceAll(':', '-')}`;
  for (const [file, content] of [
    [`${base}.json`, json],
    [`${base}.svg`, svg],
    [`${dir}latest.json`, json],
    [`${dir}latest.svg`, svg],
  ] as const) {
    await writeFile(file, content);
  }
  return `${base}.json`;
}
