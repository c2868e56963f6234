import type { Peer, Row } from './report.js';

/** In the table's order; the chart imports only types from report.ts, which imports the chart. */
const COLOURS: Record<Peer, string> = { zklock: '#1f6fb2', curator: '#c0392b', nzk: '#7f8c8d', kazoo: '#27ae60' };
const PEERS = Object.keys(COLOURS) as Peer[];
const NAMES: Record<Peer, string> = { zklock: 'zklock', curator: 'Curator 5.4', nzk: 'node-zookeeper-client', kazoo: 'kazoo' };
const LABEL_WIDTH = 150;
const BAR_AREA = 420;
const BAR_HEIGHT = 14;
const GROUP_GAP = 12;

/**
 * The comparable rows (two peers or more, a rate or a time) as horizontal bar groups: one group
 * per scenario, one bar per library scaled to the group's largest value, a whisker over the
 * range of rounds where there is one, and the value written beside it. Longer is better for a
 * rate; for a time, the title says "lower is better".
 */
export function renderChart(rows: readonly Row[], title: string): string {
  const measured = (row: Row): Peer[] => PEERS.filter((peer) => Number.isFinite(row.samples[peer]?.value));
  const groups = rows.filter((row) => measured(row).length >= 2 && (row.unit.endsWith('/s') || row.unit === 'ms'));
  const present = PEERS.filter((peer) => groups.some((row) => measured(row).includes(peer)));
  const body: string[] = [];
  let y = 60;
  for (const row of groups) {
    const peers = measured(row);
    const top = Math.max(...peers.map((peer) => row.samples[peer]!.range?.max ?? row.samples[peer]!.value));
    const scale = (v: number): number => (top > 0 ? (v / top) * BAR_AREA : 0);
    // The scenario on a line of its own above its bars: the labels are long.
    body.push(text(8, y + 11, `${row.group}: ${row.scenario} (${row.unit}, ${row.better} is better)`, 'label'));
    y += 16;
    peers.forEach((peer, i) => {
      const sample = row.samples[peer]!;
      const barY = y + i * (BAR_HEIGHT + 2);
      body.push(text(8, barY + 11, NAMES[peer], 'value'));
      body.push(`<rect x="${LABEL_WIDTH}" y="${barY}" width="${scale(sample.value).toFixed(1)}" height="${BAR_HEIGHT}" fill="${COLOURS[peer]}"><title>${NAMES[peer]}</title></rect>`);
      if (sample.range && sample.range.min !== sample.range.max) {
        const mid = barY + BAR_HEIGHT / 2;
        body.push(`<line x1="${(LABEL_WIDTH + scale(sample.range.min)).toFixed(1)}" x2="${(LABEL_WIDTH + scale(sample.range.max)).toFixed(1)}" y1="${mid}" y2="${mid}" class="range"/>`);
      }
      body.push(text(LABEL_WIDTH + scale(sample.range?.max ?? sample.value) + 6, barY + 11, format(sample.value), 'value'));
    });
    y += peers.length * (BAR_HEIGHT + 2) + GROUP_GAP;
  }
  const legend = present.map((peer, i) => `<rect x="${8 + i * 150}" y="32" width="12" height="12" fill="${COLOURS[peer]}"/>${text(8 + i * 150 + 16, 43, NAMES[peer], 'value')}`).join('');
  // About 6 px a character at 11 px sans-serif: wide enough for the longest scenario line.
  const longest = Math.max(0, ...groups.map((row) => `${row.group}: ${row.scenario} (${row.unit}, ${row.better} is better)`.length));
  const width = Math.ceil(Math.max(LABEL_WIDTH + BAR_AREA + 90, 8 + present.length * 150, 16 + longest * 6));
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${y + 10}" font-family="sans-serif" font-size="11">`,
    '<style>.label{fill:#222}.value{fill:#444}.range{stroke:#000;stroke-width:1.5}</style>',
    text(8, 25, title, 'label'),
    legend,
    ...body,
    '</svg>',
  ].join('\n');
}

function text(x: number, y: number, content: string, cls: string): string {
  const escaped = content.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
  return `<text x="${x.toFixed(1)}" y="${y}" class="${cls}">${escaped}</text>`;
}

function format(value: number): string {
  return Math.abs(value) >= 100 ? Math.round(value).toLocaleString('en-US') : value.toPrecision(3);
}
