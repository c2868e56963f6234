import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Bench } from './context.js';
import type { Measurement } from './measure.js';
import { inFlight, measure, medianRuns } from './measure.js';
import { connectZklock } from './peers/ops-client.js';
import type { Row } from './report.js';
import { sampleOf } from './report.js';

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
  const { overloadRequests, backlogRequests } = bench.config;
  const rows: Row[] = [];
  for (const [scenario, label] of [
    ['queued', 'waiting for a connection'],
    ['silent', 'on a live connection whose server went silent'],
  ] as const) {
    const result = await probe(scenario, bench.connectString, overloadRequests);
    const bytes = result.bytesPerRequest!;
    rows.push({
      group: 'overload',
      scenario: `heap per getData ${label} (${overloadRequests.toLocaleString('en-US')} issued at once, ${Math.round(result.issueMs!)} ms to issue)`,
      unit: 'B',
      better: 'lower',
      samples: { zklock: { value: bytes, detail: result } },
      goal: { text: `≤${HEAP_GOAL_BYTES} B`, met: bytes <= HEAP_GOAL_BYTES },
    });
    bench.log(`  heap ${scenario}: done`);
  }
  for (const [scenario, label] of [
    ['readTimeout', 'all in flight, failed by a read timeout'],
    ['close', 'failed by close() (default maxInFlight)'],
  ] as const) {
    const result = await probe(scenario, bench.connectString, backlogRequests);
    const blocked = result.blockedMs!;
    const early = result.settledEarly!;
    rows.push({
      group: 'overload',
      scenario: `longest event-loop block failing ${backlogRequests.toLocaleString('en-US')} getData, ${label}`,
      unit: 'ms',
      better: 'lower',
      samples: { zklock: { value: blocked, detail: result } },
      goal: { text: `≤${BLOCK_GOAL_MS} ms`, met: blocked <= BLOCK_GOAL_MS && early === 0 },
      ...(early > 0 ? { note: `backlog ${scenario}: ${early} requests failed before the measurement began: the row measured nothing` } : {}),
    });
    bench.log(`  backlog ${scenario}: done`);
  }
  rows.push(...(await existsRows(bench)));
  return rows;
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

/** Runs one probe scenario in a child process (see overload-probe.ts) and parses its JSON line. */
function probe(scenario: string, connectString: string, count: number): Promise<Record<string, number>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', PROBE, scenario, connectString, String(count)], { stdio: ['ignore', 'pipe', 'inherit'] });
    const out: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.once('error', reject);
    child.once('close', (code) => {
      const text = Buffer.concat(out).toString().trim();
      if (code !== 0) reject(new Error(`overload probe ${scenario} exited with ${code}: ${text}`));
      else resolve(JSON.parse(text.split('\n').at(-1) ?? '') as Record<string, number>);
    });
  });
}
