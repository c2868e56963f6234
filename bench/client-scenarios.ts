import type { Bench } from './context.js';
import type { Measurement } from './measure.js';
import { inFlight, measure, medianRuns } from './measure.js';
import type { KazooClientOp } from './peers/kazoo.js';
import { runKazoo } from './peers/kazoo.js';
import { nzkOps } from './peers/nzk.js';
import type { OpsClient } from './peers/ops-client.js';
import { zklockOps } from './peers/ops-client.js';
import type { Peer, Row, Sample } from './report.js';
import { OTHER_LIBRARIES, sampleOf, speedup } from './report.js';

export const SMALL = Buffer.alloc(16, 'x');

type ClientOp = Exclude<KazooClientOp, 'ephemeralPair'>;

const OPS: readonly { op: ClientOp; label: string }[] = [
  { op: 'getData', label: 'getData 16 B' },
  { op: 'setData', label: 'setData 16 B' },
  { op: 'createDelete', label: 'create+delete 16 B (pairs)' },
];

/** One op, `total` times, with `depth` in flight; pairs give each in-flight slot its own node. */
function runOp(client: OpsClient, root: string, op: ClientOp | 'ephemeralPair', total: number, depth: number): Promise<void> {
  const dataPath = `${root}/data`;
  return inFlight(total, depth, async (_i, worker) => {
    if (op === 'getData') await client.getData(dataPath);
    else if (op === 'setData') await client.setData(dataPath, SMALL);
    else if (op === 'createDelete') await client.delete(await client.create(`${root}/c${worker}`, SMALL, 'PERSISTENT'));
    else await client.delete(await client.create(`${root}/n-`, SMALL, 'EPHEMERAL_SEQUENTIAL'));
  });
}

/** Warms up, then times `ops` operations of one kind on one Node client. */
export async function timeNodeOp(client: OpsClient, root: string, op: ClientOp | 'ephemeralPair', ops: number, depth: number, warmup: number): Promise<Measurement> {
  // NODEEXISTS from an earlier round or row is fine; anything worse shows up in the ops below.
  await client.create(root, SMALL, 'PERSISTENT').catch(() => undefined);
  await client.create(`${root}/data`, SMALL, 'PERSISTENT').catch(() => undefined);
  await runOp(client, root, op, warmup, depth);
  return measure(ops, () => runOp(client, root, op, ops, depth));
}

/** Drives the server through every client operation, pipelined, before anything is timed. */
export async function warmUpServer(bench: Bench): Promise<void> {
  const client = await zklockOps(bench.connectString);
  try {
    for (const op of [...OPS.map((o) => o.op), 'ephemeralPair'] as const) {
      await timeNodeOp(client, `${bench.root}/warmup`, op, bench.config.serverWarmupOps, bench.config.pipelineDepth, 0);
    }
  } finally {
    await client.close();
  }
}

/**
 * One row per operation and depth, each peer with one session of its own on the same server,
 * one after another (never concurrently: each measures its process's CPU alone).
 */
export async function clientScenarios(bench: Bench): Promise<Row[]> {
  const { config } = bench;
  const rows: Row[] = [];
  const [zklock, nzk] = [await zklockOps(bench.connectString), await nzkOps(bench.connectString)];
  try {
    for (const depth of [1, config.pipelineDepth]) {
      for (const { op, label } of OPS) {
        const ops = depth === 1 ? config.sequentialOps : config.pipelinedOps;
        const scenario = `${label}, ${depth === 1 ? 'sequential' : `${depth} in flight`}`;
        const node = (client: OpsClient) => (): Promise<Measurement> => timeNodeOp(client, `${bench.root}/client-${client.name}`, op, ops, depth, config.warmupOps);
        const kazoo = (): Promise<Measurement> =>
          runKazoo(bench.connectString, { scenario: 'client', root: `${bench.root}/client-kazoo`, op, ops, depth, warmup: config.warmupOps });
        const samples = await measuredSamples(bench, { zklock: node(zklock), nzk: node(nzk), kazoo });
        rows.push(withClientGoal({ group: 'client', scenario, unit: 'ops/s', better: 'higher', samples }, op === 'getData' && depth > 1));
        bench.log(`  ${scenario}: done`);
      }
    }
  } finally {
    await Promise.all([zklock.close(), nzk.close()]);
  }
  return rows;
}

/** Throughput samples of each peer's median run over the configured rounds (kazoo's and Curator's only when they run). */
export async function measuredSamples(bench: Bench, runs: Partial<Record<Peer, () => Promise<Measurement>>>): Promise<Partial<Record<Peer, Sample>>> {
  const skipped = (peer: string): boolean => (peer === 'kazoo' && !bench.kazoo) || (peer === 'curator' && !bench.curator);
  const wanted = Object.fromEntries(Object.entries(runs).filter(([peer]) => !skipped(peer))) as Partial<Record<Peer, () => Promise<Measurement>>>;
  const medians = await medianRuns<Peer>(bench.config.rounds, wanted, OTHER_LIBRARIES);
  return Object.fromEntries(Object.entries(medians).map(([peer, m]) => [peer, sampleOf(m)]));
}

/**
 * The issues' goals: at least as fast as every peer on every row; on pipelined small reads 1.5×
 * as fast, for at most half of node-zookeeper-client's CPU per call.
 */
function withClientGoal(row: Row, pipelinedRead: boolean): Row {
  const factor = pipelinedRead ? 1.5 : 1;
  const ratios = (['nzk', 'kazoo'] as const).map((peer) => speedup(row, peer)).filter((r) => r !== undefined);
  const fast = ratios.every((r) => r >= factor);
  if (!pipelinedRead) return { ...row, goal: { text: `≥${factor}× every peer`, met: fast } };
  const [ours, theirs] = [row.samples.zklock?.cpuUsPerOp, row.samples.nzk?.cpuUsPerOp];
  const cpuRatio = ours !== undefined && theirs !== undefined ? ours / theirs : Number.NaN;
  return { ...row, goal: { text: `≥${factor}× every peer, cpu ≤0.5× nzk's (${cpuRatio.toFixed(2)}×)`, met: fast && cpuRatio <= 0.5 } };
}
