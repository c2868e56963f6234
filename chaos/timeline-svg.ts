import type { FaultRecord, OperationRecord } from './history.js';
import { EXCLUSIVE_PATHS, LOCKS } from './history.js';

export interface TimelineInput {
  operations: readonly OperationRecord[];
  faults: readonly FaultRecord[];
  runStart: number;
  runEnd: number;
}

const LABEL_WIDTH = 130;
const LANE_HEIGHT = 9;
const ROW_GAP = 16;
const LABEL_ROWS = 3;
const TOP = 16 + LABEL_ROWS * 10;
/** Short labels, so the labels of faults a few seconds apart do not run into each other. */
const FAULT_LABELS: Record<string, string> = {
  'kill-member': 'kill',
  'kill-leader': 'kill leader',
  'restart-ensemble': 'restart all',
  'pause-worker': 'pause',
  'cut-worker': 'cut',
  'blackhole-worker': 'blackhole',
  'expire-session': 'expire',
};
const FAULT_COLOURS: Record<string, string> = {
  'kill-member': '#d62728',
  'kill-leader': '#8c1c13',
  'restart-ensemble': '#000000',
  'pause-worker': '#9467bd',
  'cut-worker': '#ff7f0e',
  'blackhole-worker': '#e377c2',
  'expire-session': '#17becf',
};

/**
 * Holders per lock over time: one row per lock, each holder a bar (stacked lanes, so any overlap
 * shows as a second bar), coloured by worker process; faded bars were rejected by the fence,
 * red-edged ones ran after their lease's signal aborted. Faults are shaded bands across all rows.
 */
export function renderTimeline(input: TimelineInput): string {
  const seconds = Math.max(1, (input.runEnd - input.runStart) / 1000);
  const width = Math.min(4000, Math.max(1200, Math.round(seconds * 5)));
  const x = (t: number): number => LABEL_WIDTH + ((t - input.runStart) / 1000 / seconds) * (width - LABEL_WIDTH - 10);
  const processes = [...new Set(input.operations.map((op) => op.process))].sort();
  const colour = (process: string): string => `hsl(${Math.round((processes.indexOf(process) * 360) / Math.max(1, processes.length))},65%,45%)`;
  const body: string[] = [];
  let y = TOP;
  for (const lock of [...EXCLUSIVE_PATHS, LOCKS.semaphore]) {
    const ops = input.operations.filter((op) => op.locks.some((l) => l.lock === lock)).sort((a, b) => a.start - b.start);
    const lanes = assignLanes(ops, input.runEnd);
    const height = Math.max(1, ...lanes.values()) * LANE_HEIGHT + LANE_HEIGHT;
    body.push(`<text x="4" y="${y + 12}" class="label">${lock}</text>`, `<rect x="${LABEL_WIDTH}" y="${y}" width="${width - LABEL_WIDTH - 10}" height="${height}" class="row"/>`);
    for (const op of ops) {
      const left = x(op.start);
      const barWidth = Math.max(0.6, x(op.end ?? input.runEnd) - left);
      const top = y + (lanes.get(op.id) ?? 0) * LANE_HEIGHT + 1;
      const cls = [op.accepted ? '' : 'rejected', op.lost ? 'lost' : '', op.kind === 'read' ? 'read' : ''].filter(Boolean).join(' ');
      body.push(`<rect x="${left.toFixed(1)}" y="${top}" width="${barWidth.toFixed(1)}" height="${LANE_HEIGHT - 2}" fill="${colour(op.process)}" class="${cls}"><title>${escapeXml(`${op.id} ${op.kind} token ${op.locks.map((l) => l.token).join('/')}${op.rejected ? ` rejected: ${op.rejected}` : ''}${op.lost ? ` lost: ${op.lost}` : ''}`)}</title></rect>`);
    }
    y += height + ROW_GAP;
  }
  const faults = input.faults.map((f, i) => {
    const left = x(f.start);
    const band = Math.max(2, x(f.end) - left);
    const fill = FAULT_COLOURS[f.kind] ?? '#d62728';
    return `<rect x="${left.toFixed(1)}" y="${TOP - 6}" width="${band.toFixed(1)}" height="${y - TOP}" fill="${fill}" opacity="0.18"/><text x="${left.toFixed(1)}" y="${TOP - 10 - (i % LABEL_ROWS) * 10}" class="fault" fill="${fill}">${escapeXml(`${FAULT_LABELS[f.kind] ?? f.kind} ${f.target.replace('member ', 'm').replace('all members', '')}`)}</text>`;
  });
  const legend = processes.map((p, i) => `<rect x="${LABEL_WIDTH + i * 110}" y="${y + 24}" width="10" height="10" fill="${colour(p)}"/><text x="${LABEL_WIDTH + 14 + i * 110}" y="${y + 33}" class="label">${p}</text>`);
  const height = y + 58;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">`,
    '<style>.label{font-size:11px}.fault{font-size:9px}.row{fill:#eee;fill-opacity:0.5}.rejected{opacity:0.3}.lost{stroke:#d00;stroke-width:1}.read{opacity:0.75}.axis{font-size:10px;fill:#555}</style>',
    `<rect width="${width}" height="${height}" fill="white"/>`,
    ...axis(seconds, x, input.runStart, y),
    ...body,
    ...faults,
    ...legend,
    `<text x="4" y="${y + 33}" class="label">workers:</text>`,
    `<text x="${LABEL_WIDTH}" y="${y + 48}" class="axis">bars: holders (stacked = concurrent); faded: rejected by the fence; red edge: lease signal aborted; bands: faults</text>`,
    '</svg>',
  ].join('\n');
}

/** Rejection reasons hold '<'; text content must not. */
function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Greedy lanes: each operation takes the lowest lane free at its start, so concurrent holders stack. */
function assignLanes(sorted: readonly OperationRecord[], runEnd: number): Map<string, number> {
  const laneEnds: number[] = [];
  const lanes = new Map<string, number>();
  for (const op of sorted) {
    let lane = laneEnds.findIndex((end) => end <= op.start);
    if (lane < 0) lane = laneEnds.length;
    laneEnds[lane] = op.end ?? runEnd;
    lanes.set(op.id, lane);
  }
  return lanes;
}

function axis(seconds: number, x: (t: number) => number, runStart: number, bottom: number): string[] {
  const step = [1, 2, 5, 10, 20, 30, 60, 120].find((s) => seconds / s <= 20) ?? 300;
  const ticks: string[] = [];
  for (let s = 0; s <= seconds; s += step) {
    const at = x(runStart + s * 1000).toFixed(1);
    ticks.push(`<line x1="${at}" y1="${TOP - 4}" x2="${at}" y2="${bottom}" stroke="#ddd"/><text x="${at}" y="${bottom + 12}" class="axis">${s}s</text>`);
  }
  return ticks;
}
