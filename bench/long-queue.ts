import { fileURLToPath } from 'node:url';
import type { Bench } from './context.js';
import { summarizeHandoffs } from './lock-contention.js';
import type { LongQueueProbeSpec } from './long-queue-probe.js';
import { runCurator } from './peers/curator.js';
import { runKazoo } from './peers/kazoo.js';
import type { PeerLongQueue, PeerResult } from './peers/peer-run.js';
import type { Peer, Row, Sample } from './report.js';
import { runProbe } from './run-process.js';

const PROBE = fileURLToPath(new URL('./long-queue-probe.ts', import.meta.url));

/**
 * The heap limit of zklock's process (`--max-old-space-size`) and of Curator's JVM (`-Xmx`, with
 * `-XX:+ExitOnOutOfMemoryError` so that a JVM out of heap ends instead of living on with dead
 * threads): fifty times the 20 MB the issue allows 10,000 waiters, and low enough that a client
 * whose memory grows with the square of the queue fails its cell in a minute or two instead of
 * taking gigabytes of a shared machine. kazoo's Python has no heap limit; its time bound ends it.
 */
const HEAP_LIMIT_MB = 1024;
/**
 * The goal of issue 30 for zklock: memory per waiter independent of its place in the queue, at
 * most this at 10,000 waiters. Held from 1,000 waiters on: below, the process's own fixed costs
 * (a compiled path, a grown buffer) are too large a share of the figure.
 */
const GOAL_BYTES_PER_WAITER = 2048;
const GOAL_FROM_WAITERS = 1000;

/**
 * How long the queue of `waiters` may take to form, and each waiter to get the lock (ms): a
 * client that lists the whole queue on every join takes time growing with its square (kazoo
 * parses and sorts every listing in Python), which on a loaded 2-core machine comes to minutes.
 */
function boundMs(waiters: number): number {
  // Whole seconds: the peers take it in seconds.
  return Math.ceil(120 + 0.06 * waiters) * 1000;
}
/** Beyond the bound: connecting the sessions, the warm-up drain, the timed drain, closing. */
const PROCESS_SLACK_MS = 120_000;

const METHOD =
  'long queue: each size runs in a process of its own per library (zklock: node --expose-gc, heap limited to ' +
  `${HEAP_LIMIT_MB} MB; Curator: a JVM with -Xmx${HEAP_LIMIT_MB}m; kazoo: Python), its waiters spread over the sessions of that process, ` +
  'a holder on one more session and an untimed warm-up drain first, as in the herd rows; a library that fails a size is not run at the larger ones. ' +
  "Join: from the first waiter's acquire to the last watch the server counted (wchs read every 20 ms; the queue counts as formed once it holds one or more watches per waiter, " +
  'has not moved for 500 ms, and the lock lists the holder and every waiter). Drain: from the holder\'s release until every waiter has acquired and released in turn; ' +
  "server requests and watch events per handoff from the server's mntr around the drain (pings and heartbeats included). " +
  'Memory the queued waiters add, after a full collection, minus the same before the first waiter: zklock V8 used heap + ArrayBuffers (heap.ts), ' +
  "Curator the JVM's used heap after System.gc() (the waiters' thread stacks are outside it), kazoo the resident set (VmRSS; Python has no cheap heap figure, " +
  'tracemalloc would slow the join), which includes its thread stacks; each side also reports its resident set, in the JSON. Heaps of three runtimes: no ratios.';

/**
 * The long-queue rows: for each size, that many waiters queued on one lock from the sessions of
 * one process, handed the lock down the queue, for zklock, Curator's InterProcessMutex and
 * kazoo's Lock: time to join, time to drain, memory per queued waiter, server requests and
 * watch events per handoff. A library's run that fails (out of memory, past its bound) is a
 * failed cell with its reason in the notes, not the end of the benchmark.
 */
export async function longQueueScenarios(bench: Bench): Promise<Row[]> {
  const { sessions, waiters: sizes } = bench.config.longQueue;
  const rows: Row[] = [];
  const failedAt = new Map<Peer, number>();
  for (const waiters of sizes) {
    const waitersPerSession = waiters / sessions;
    const bound = boundMs(waiters);
    const timeoutMs = bound + PROCESS_SLACK_MS;
    const spec = (peer: Peer): PeerLongQueue => ({ scenario: 'longqueue', root: `${bench.root}/longqueue-${waiters}-${peer}`, sessions, waitersPerSession, boundS: bound / 1000 });
    const probe = (): LongQueueProbeSpec => ({ connectString: bench.connectString, root: spec('zklock').root, sessions, waitersPerSession, boundMs: bound });
    const sides: Partial<Record<Peer, () => Promise<PeerResult>>> = {
      zklock: () => runProbe<PeerResult>(PROBE, [JSON.stringify(probe())], { nodeOptions: [`--max-old-space-size=${HEAP_LIMIT_MB}`], timeoutMs }),
      ...(bench.curator ? { curator: () => runCurator(bench.connectString, spec('curator'), { jvmOptions: [`-Xmx${HEAP_LIMIT_MB}m`, '-XX:+ExitOnOutOfMemoryError'], timeoutMs }) } : {}),
      ...(bench.kazoo ? { kazoo: () => runKazoo(bench.connectString, spec('kazoo'), timeoutMs) } : {}),
    };
    const outcomes = new Map<Peer, PeerResult | string>();
    for (const [peer, run] of Object.entries(sides) as [Peer, () => Promise<PeerResult>][]) {
      const earlier = failedAt.get(peer);
      if (earlier !== undefined) {
        outcomes.set(peer, `not run: failed at ${earlier.toLocaleString('en-US')} waiters`);
        continue;
      }
      try {
        outcomes.set(peer, await run());
      } catch (error) {
        failedAt.set(peer, waiters);
        outcomes.set(peer, (error instanceof Error ? error.message : String(error)).split('\n')[0]!);
      }
      bench.log(`  long queue ${waiters}: ${peer} ${typeof outcomes.get(peer) === 'string' ? 'failed' : 'done'}`);
    }
    rows.push(...sizeRows(waiters, `${waiters.toLocaleString('en-US')} waiters on 1 lock (${sessions} sessions × ${waitersPerSession})`, outcomes));
  }
  return rows;
}

/** One size's rows from each library's run, or the reason it has none. */
function sizeRows(waiters: number, label: string, outcomes: ReadonlyMap<Peer, PeerResult | string>): Row[] {
  const samples = (of: (r: PeerResult) => Sample | number | undefined): Partial<Record<Peer, Sample>> =>
    Object.fromEntries(
      [...outcomes].map(([peer, outcome]) => {
        if (typeof outcome === 'string') return [peer, { value: Number.NaN, failed: outcome }];
        const sample = of(outcome);
        return [peer, typeof sample === 'object' ? sample : { value: sample ?? Number.NaN }];
      }),
    );
  const row = (what: string, unit: string, of: (r: PeerResult) => Sample | number | undefined): Row => ({ group: 'longqueue', scenario: `${label}: ${what}`, unit, better: 'lower', samples: samples(of) });
  const perHandoff = (count: number | undefined, r: PeerResult): number | undefined => (count === undefined ? undefined : count / r.ops);

  const join = row('time for all to join', 'ms', (r) => r.joinMs);
  join.note = METHOD;
  const drain = row('time to drain (each waiter acquires and releases in turn)', 'ms', (r) => {
    const handoffs = summarizeHandoffs(r.events ?? []);
    return { value: r.wallMs, cpuUsPerOp: r.cpuUs / r.ops, detail: { msPerHandoff: r.wallMs / r.ops, handoffP50Ms: handoffs.p50, handoffP99Ms: handoffs.p99 } };
  });
  const failures = [...outcomes].flatMap(([peer, outcome]) => (typeof outcome === 'string' ? [`${peer} ${outcome}`] : []));
  if (failures.length > 0) drain.note = `long queue, ${label}: failed: ${failures.join('; ')}`;

  const heap = row('memory per queued waiter (zklock, Curator: heap; kazoo: RSS)', 'B', (r) =>
    r.heapBytes === undefined ? undefined : { value: r.heapBytes / r.ops, detail: { heapBytes: r.heapBytes, rssBytes: r.rssBytes, rssPerWaiter: r.rssBytes === undefined ? undefined : r.rssBytes / r.ops } },
  );
  heap.compare = false;
  const ours = heap.samples.zklock?.value;
  if (waiters >= GOAL_FROM_WAITERS) heap.goal = { text: `zklock ≤ ${GOAL_BYTES_PER_WAITER.toLocaleString('en-US')} B per waiter`, met: ours !== undefined && ours <= GOAL_BYTES_PER_WAITER };
  const added = [...outcomes].flatMap(([peer, outcome]) =>
    typeof outcome === 'string' || outcome.heapBytes === undefined ? [] : [`${peer} ${megabytes(outcome.heapBytes)} (resident set ${megabytes(outcome.rssBytes)})`],
  );
  if (added.length > 0) heap.note = `long queue, ${label}: memory the queued waiters added: ${added.join(', ')}`;

  return [
    join,
    drain,
    heap,
    row('server requests per handoff (mntr packets over the drain)', 'requests', (r) => perHandoff(r.server?.packets, r)),
    row('watch events per release (mntr watchers fired over the drain)', 'events', (r) => perHandoff(r.server?.watchEvents, r)),
  ];
}

function megabytes(bytes: number | undefined): string {
  return bytes === undefined ? '?' : `${(bytes / 2 ** 20).toFixed(1)} MB`;
}
