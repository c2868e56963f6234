import { readFileSync } from 'node:fs';
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
  /**
   * Transaction-log fsyncs (mntr's fsynctime count): one covers every commit batched into it.
   * Their time is not shown: mntr sums whole milliseconds per fsync, and one here takes less.
   */
  readonly fsyncs: number;
  /** The server JVM's CPU time (user + system, from /proc), ms; absent where /proc could not be read. */
  readonly serverCpuMs?: number;
}

/**
 * The environment variable naming the server JVM's pid, for the peers' processes, which read its
 * CPU time from /proc beside each `mntr` they read (see {@link withServerCpu}).
 */
export const SERVER_PID_ENV = 'ZKLOCK_BENCH_SERVER_PID';
/** The line {@link withServerCpu} appends to an `mntr` answer, in mntr's own shape (name, tab, value). */
const CPU_TICKS = 'zklock_server_cpu_ticks';
/** /proc counts CPU time in clock ticks of 1/100 s on Linux (sysconf(_SC_CLK_TCK) is 100 on every architecture it runs on here). */
const MS_PER_TICK = 10;

/** The server JVM's utime + stime in clock ticks (fields 14 and 15 of /proc/<pid>/stat), or undefined without /proc. */
function serverCpuTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

/** What reading the server's counters takes: its four-letter words and its JVM's pid (a probe's process has these without the rest of a {@link Bench}). */
export type ServerProbe = Pick<Bench, 'fourLetterWord' | 'serverPid'>;

/** An `mntr` answer with the server's CPU ticks appended, as CuratorBench.java's and kazoo_bench.py's mntr() do. */
export async function withServerCpu(bench: ServerProbe): Promise<string> {
  const mntr = await bench.fourLetterWord('mntr');
  const ticks = bench.serverPid === undefined ? undefined : serverCpuTicks(bench.serverPid);
  return ticks === undefined ? mntr : `${mntr}${CPU_TICKS}\t${ticks}\n`;
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
  const ticks = values.get(CPU_TICKS);
  return {
    packets: read(PACKETS),
    watchEvents: WATCHES_FIRED.reduce((sum, key) => sum + read(key), 0),
    fsyncs: read('zk_cnt_fsynctime'),
    ...(ticks === undefined ? {} : { serverCpuMs: Number(ticks) * MS_PER_TICK }),
  };
}

/** The traffic between two `mntr` answers. */
export function trafficBetween(before: string, after: string): ServerTraffic {
  const [a, b] = [counters(before), counters(after)];
  const cpu = a.serverCpuMs !== undefined && b.serverCpuMs !== undefined ? { serverCpuMs: b.serverCpuMs - a.serverCpuMs } : {};
  return { packets: b.packets - a.packets, watchEvents: b.watchEvents - a.watchEvents, fsyncs: b.fsyncs - a.fsyncs, ...cpu };
}

/** Runs `body` (nothing else talking to the server meanwhile) and adds the server's count of its traffic. */
export async function withTraffic<T extends object>(bench: ServerProbe, body: () => Promise<T>): Promise<T & { server: ServerTraffic }> {
  const before = await withServerCpu(bench);
  const result = await body();
  return { ...result, server: trafficBetween(before, await withServerCpu(bench)) };
}

const TRAFFIC_NOTE =
  "server requests, watch events, fsyncs and CPU per cycle: the server's mntr (and its JVM's CPU time from /proc) read just before and after each timed window (by the benchmark for zklock and nzk, by kazoo's and Curator's own processes for theirs, so their connecting and warm-up fall outside), over the window's cycles; every packet the server received counts: pings, zklock's heartbeat syncs (one per session every sessionTimeout/10) and those of the benchmark's idle sessions; one fsync covers every commit the server batched into it";

/**
 * What the server did per cycle for each peer, the median over its rounds with their range:
 * requests, fsyncs, its CPU, and with `watches` the watch events it sent.
 * A peer whose runs carry no count is left out of a row.
 */
export function trafficRows(group: string, label: string, runs: ReadonlyMap<Peer, readonly { ops: number; server?: ServerTraffic | undefined }[]>, watches: boolean): Row[] {
  const row = (what: string, unit: string, of: (s: ServerTraffic) => number | undefined): Row => ({
    group,
    scenario: `${label}: ${what}`,
    unit,
    better: 'lower',
    samples: Object.fromEntries(
      [...runs].flatMap(([peer, rounds]) => {
        const counted = rounds.flatMap((r) => {
          const value = r.server && of(r.server);
          return value === undefined ? [] : [value / r.ops];
        });
        return counted.length === 0 ? [] : [[peer, medianOf(counted)]];
      }),
    ),
  });
  const rows = [
    row('server requests per cycle (mntr packets received, pings included)', 'requests', (s) => s.packets),
    ...(watches ? [row('watch events per cycle (mntr watchers fired)', 'events', (s) => s.watchEvents)] : []),
    row('server fsyncs per cycle', 'fsyncs', (s) => s.fsyncs),
    row('server CPU per cycle (its JVM, all threads)', 'µs', (s) => (s.serverCpuMs === undefined ? undefined : s.serverCpuMs * 1000)),
  ];
  rows[0]!.note = TRAFFIC_NOTE;
  return rows;
}
