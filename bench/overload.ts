import { fileURLToPath } from 'node:url';
import type { Bench } from './context.js';
import type { Measurement } from './measure.js';
import { inFlight, measure, medianRuns } from './measure.js';
import { connectZklock } from './peers/ops-client.js';
import type { Row } from './report.js';
import { sampleOf } from './report.js';
import { runProbe } from './run-process.js';

const PROBE = fileURLToPath(new URL('./overload-probe.ts', import.meta.url));

/** Issue 11's goals for a client under overload. */
const HEAP_GOAL_BYTES = 400;
const BLOCK_GOAL_MS = 50;
/** An exists answered NONODE should cost about what an exists answered with a Stat does: it is an answer, not an accident. */
const MISSING_EXISTS_GOAL = 1.1;

/**
 * The client under overload (issue 11): heap per request queued against a silent server, the
 * longest event-loop block while a large backlog fails, and what an expected NONODE costs.
 * zklock only: the peers have no bound to compare (node-zookeeper-client queues without limit).
 */
export async function overloadScenarios(bench: Bench): Promise<Row[]> {
  const { overloadRequests: issued, backlogRequests: failed } = bench.config;
  const probes: readonly { scenario: string; count: number; row: (result: Record<string, number>) => Row }[] = [
    { scenario: 'queued', count: issued, row: (result) => heapRow('waiting for a connection', issued, result) },
    { scenario: 'silent', count: issued, row: (result) => heapRow('on a live connection whose server went silent', issued, result) },
    { scenario: 'readTimeout', count: failed, row: (result) => blockRow('readTimeout', 'all in flight, failed by a read timeout', failed, result) },
    { scenario: 'close', count: failed, row: (result) => blockRow('close', 'failed by close() (default maxInFlight)', failed, result) },
  ];
  const rows: Row[] = [];
  for (const { scenario, count, row } of probes) {
    rows.push(row(await runProbe(PROBE, [scenario, bench.connectString, String(count)])));
    bench.log(`  ${scenario}: done`);
  }
  rows.push(...(await existsRows(bench)));
  return rows;
}

function heapRow(label: string, issued: number, result: Record<string, number>): Row {
  const bytes = result.bytesPerRequest!;
  const scenario = `heap per getData ${label} (${issued.toLocaleString('en-US')} issued at once, ${Math.round(result.issueMs!)} ms to issue)`;
  return ownRow(scenario, 'B', result, bytes, { text: `≤${HEAP_GOAL_BYTES} B`, met: bytes <= HEAP_GOAL_BYTES });
}

function blockRow(name: string, label: string, failed: number, result: Record<string, number>): Row {
  const [blocked, early] = [result.blockedMs!, result.settledEarly!];
  const row = ownRow(`longest event-loop block failing ${failed.toLocaleString('en-US')} getData, ${label}`, 'ms', result, blocked, {
    text: `≤${BLOCK_GOAL_MS} ms`,
    met: blocked <= BLOCK_GOAL_MS && early === 0,
  });
  if (early > 0) row.note = `${name}: ${early} requests failed before the measurement began: the row measured nothing`;
  return row;
}

/** A row of zklock's alone, lower being better, from a probe's result. */
function ownRow(scenario: string, unit: string, detail: Record<string, number>, value: number, goal: Row['goal']): Row {
  return { group: 'overload', scenario, unit, better: 'lower', samples: { zklock: { value, detail } }, goal };
}

/** exists on an existing node and on a missing one, pipelined, on one session: the client CPU per call. */
async function existsRows(bench: Bench): Promise<Row[]> {
  const { pipelinedOps, pipelineDepth, warmupOps, rounds } = bench.config;
  const client = await connectZklock(bench.connectString);
  try {
    const present = `${bench.root}/exists-present`;
    await client.create(present).catch(() => undefined);
    const run = (path: string) => async (): Promise<Measurement> => {
      await inFlight(warmupOps, pipelineDepth, () => client.exists(path));
      return measure(pipelinedOps, () => inFlight(pipelinedOps, pipelineDepth, () => client.exists(path)));
    };
    const medians = await medianRuns(rounds, { present: run(present), missing: run(`${bench.root}/exists-missing`) });
    const [presentSample, missingSample] = [sampleOf(medians.present!), sampleOf(medians.missing!)];
    const ratio = missingSample.cpuUsPerOp! / presentSample.cpuUsPerOp!;
    const scenario = (what: string): string => `exists on ${what}, ${pipelineDepth} in flight`;
    return [
      { group: 'overload', scenario: scenario('an existing node'), unit: 'ops/s', better: 'higher', samples: { zklock: presentSample } },
      {
        group: 'overload',
        scenario: `${scenario('a missing node')} (cpu ${ratio.toFixed(2)}× the existing node's)`,
        unit: 'ops/s',
        better: 'higher',
        samples: { zklock: missingSample },
        goal: { text: `cpu ≤${MISSING_EXISTS_GOAL}× exists on an existing node`, met: ratio <= MISSING_EXISTS_GOAL },
      },
    ];
  } finally {
    await client.close();
  }
}
