import type { Bench } from './context.js';
import { medianOf } from './measure.js';
import type { Peer, Row } from './report.js';

/**
 * What the server counted over a timed window, from its `mntr` four-letter word read just before
 * and just after it (by the benchmark for the Node clients, by the peer's own process for kazoo
 * and Curator, so their connecting and warm-up fall outside it): packets it received — every
 * request, pings and zklock's heartbeat syncs included, the `mntr` itself not — and watch
 * notifications it sent (the watchers each created, deleted, changed or children event fired).
 */
export interface ServerTraffic {
  readonly packets: number;
  readonly watchEvents: number;
}

/** The server's `Total watches` from a `wchs` answer (undefined when it has none). */
export function totalWatches(wchs: string): number | undefined {
  const match = /Total watches:\s*(\d+)/.exec(wchs);
  return match ? Number(match[1]) : undefined;
}

const PACKETS = 'zk_packets_received';
const WATCHES_FIRED = ['created', 'deleted', 'changed', 'children'].map((event) => `zk_sum_node_${event}_watch_count`);

function counters(mntr: string): ServerTraffic {
  const values = new Map<string, string | undefined>();
  for (const line of mntr.split('\n')) {
    const [key, value] = line.split('\t');
    if (key) values.set(key, value);
  }
  const read = (key: string): number => {
    const value = Number(values.get(key));
    if (!Number.isFinite(value)) throw new Error(`mntr gave no ${key}`);
    return value;
  };
  return { packets: read(PACKETS), watchEvents: WATCHES_FIRED.reduce((sum, key) => sum + read(key), 0) };
}

/** The traffic between two `mntr` answers. */
export function trafficBetween(before: string, after: string): ServerTraffic {
  const [a, b] = [counters(before), counters(after)];
  return { packets: b.packets - a.packets, watchEvents: b.watchEvents - a.watchEvents };
}

/** Runs `body` (nothing else talking to the server meanwhile) and adds the server's count of its traffic. */
export async function withTraffic<T extends object>(bench: Bench, body: () => Promise<T>): Promise<T & { server: ServerTraffic }> {
  const before = await bench.fourLetterWord('mntr');
  const result = await body();
  return { ...result, server: trafficBetween(before, await bench.fourLetterWord('mntr')) };
}

const TRAFFIC_NOTE =
  "server requests and watch events per cycle: the server's mntr read just before and after each timed window (by the benchmark for zklock and nzk, by kazoo's and Curator's own processes for theirs, so their connecting and warm-up fall outside), over the window's cycles; every packet the server received counts: pings, zklock's heartbeat syncs (one per session every sessionTimeout/10) and those of the benchmark's idle sessions";

/**
 * "server requests per cycle" (and, with `watches`, "watch events per cycle") for each peer, the
 * median over its rounds with their range; a peer whose runs carry no count is left out.
 */
export function trafficRows(group: string, label: string, runs: ReadonlyMap<Peer, readonly { ops: number; server?: ServerTraffic | undefined }[]>, watches: boolean): Row[] {
  const row = (what: string, unit: string, of: (s: ServerTraffic) => number): Row => ({
    group,
    scenario: `${label}: ${what}`,
    unit,
    better: 'lower',
    samples: Object.fromEntries(
      [...runs].flatMap(([peer, rounds]) => {
        const counted = rounds.filter((r) => r.server !== undefined);
        return counted.length === 0 ? [] : [[peer, medianOf(counted.map((r) => of(r.server!) / r.ops))]];
      }),
    ),
  });
  const rows = [row('server requests per cycle (mntr packets received, pings included)', 'requests', (s) => s.packets)];
  rows[0]!.note = TRAFFIC_NOTE;
  if (watches) rows.push(row('watch events per cycle (mntr watchers fired)', 'events', (s) => s.watchEvents));
  return rows;
}
