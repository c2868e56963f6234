/**
 * The fault-injection correctness run: `npm run chaos -- --duration 600 --seed 1`.
 * Worker processes contend for locks and operate on a fenced resource while a seeded nemesis
 * kills and freezes members, partitions and slows the links between them, restarts the
 * ensemble, pauses workers and cuts their connections; then the checker reads the history and
 * the report goes to chaos/results/ (exit code 1 on any violation). `--kinds` picks the faults
 * (a kind named twice comes up twice as often).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { ZooKeeperClient } from '../src/index.js';
import { ZooKeeperEnsemble } from '../src/testing/index.js';
import { ephemeralNodes } from './contender-nodes.js';
import { FencedResource } from './fenced-resource.js';
import type { FaultKind } from './history.js';
import { FAULT_KINDS, preciseNow } from './history.js';
import { runNemesis } from './nemesis.js';
import { Prng } from './prng.js';
import { writeResults } from './results.js';
import { WorkerPool } from './worker-pool.js';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '600' },
    seed: { type: 'string', default: '1' },
    workers: { type: 'string', default: '4' },
    'session-timeout': { type: 'string', default: '3000' },
    kinds: { type: 'string', default: FAULT_KINDS.join(',') },
    /** Curator and kazoo contenders on the same lock paths: `curator,kazoo` (one process each; repeat for more). */
    peers: { type: 'string', default: '' },
    /** Quiet time before each fault, in session timeouts (`min-max`). */
    gap: { type: 'string', default: '2-3' },
    out: { type: 'string' },
  },
});
const durationS = Number(values.duration);
const seed = Number(values.seed);
const sessionTimeout = Number(values['session-timeout']);
const kinds = values.kinds.split(',').map((kind) => {
  if (!FAULT_KINDS.includes(kind as FaultKind)) throw new Error(`unknown fault kind "${kind}"; known: ${FAULT_KINDS.join(', ')}`);
  return kind as FaultKind;
});
const [gapMin = NaN, gapMax = NaN] = values.gap.split('-').map(Number);
if (!(gapMin >= 0.5 && gapMax >= gapMin)) throw new Error(`--gap wants min-max in session timeouts, min ≥ 0.5, got "${values.gap}"`);
const peers = values.peers
  .split(',')
  .filter((peer) => peer !== '')
  .map((peer) => {
    if (peer !== 'curator' && peer !== 'kazoo') throw new Error(`unknown peer "${peer}"; known: curator, kazoo`);
    return peer;
  });
const outDir = values.out ?? join('chaos', 'results', `seed-${seed}-${durationS}s`);
const log = (line: string): void => console.log(`[chaos ${new Date().toISOString().slice(11, 19)}] ${line}`);
/** Released nodes may still be on their way out (guaranteed deletes retry across reconnects). */
const SETTLE_MS = 2 * sessionTimeout;

mkdirSync(outDir, { recursive: true });
const prng = new Prng(seed);
log(`seed ${seed}, ${durationS} s, starting a 3-member ensemble`);
await using ensemble = await ZooKeeperEnsemble.start({ size: 3, linkProxies: true });
const leader = await ensemble.leader();
const followers = ensemble.members.filter((member) => member !== leader).map((member) => member.id);
await using resource = await FencedResource.start();
await using pool = await WorkerPool.start({
  ensemble,
  count: Number(values.workers),
  peers,
  seed,
  resourceUrl: resource.url,
  sessionTimeout,
  pinTo: followers,
  logFile: join(outDir, 'workers.log'),
});
// Interrupted: the harness's watchdog removes the JVMs once we are gone, but workers are ours to kill.
process.once('exit', () => pool.killAll());
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    pool.killAll();
    process.exit(130);
  });
}
const runStart = preciseNow();
const until = Date.now() + durationS * 1000;
const pinned = pool.workers.filter((w) => w.pinnedTo !== undefined).map((w) => `${w.name} on member ${w.pinnedTo}`);
log(`${pool.workers.length} workers (${pool.logicalWorkers} logical; peers: ${peers.join(', ') || 'none'}; pinned to followers: ${pinned.join(', ') || 'none'}) running`);
log(`nemesis on: ${kinds.join(', ')}`);
const faults = await runNemesis({
  ensemble,
  workers: pool.workers,
  kinds,
  gap: [gapMin, gapMax],
  prng: prng.fork(1),
  sessionTimeout,
  until,
  signal: AbortSignal.timeout(durationS * 1000 + 120_000),
  log,
  busyExclusive: (name, forMs) => resource.busyExclusive(name, forMs),
});
await sleep(Math.max(0, until - Date.now()));
await pool.stop();
const runEnd = preciseNow();
log(`workers idle; looking for contender nodes left behind`);
await ensemble.waitForQuorum({ timeoutMs: 30_000 });
const leakedNodes = await leftNodes(ensemble.connectString);
const workerStats = await pool.close();

const { summary, markdown } = writeResults(outDir, {
  seed,
  durationS,
  workers: pool.workers.length,
  logicalWorkers: pool.logicalWorkers,
  sessionTimeoutMs: sessionTimeout,
  runStart,
  runEnd,
  operations: resource.operations,
  faults,
  leakedNodes,
  workerStats,
});
console.log(markdown);
log(`report in ${outDir}: ${summary.check.ok ? 'PASS' : 'FAIL'}`);
process.exitCode = summary.check.ok ? 0 : 1;

/** Contender nodes still there while every worker is idle but connected: each one is a leak. */
async function leftNodes(connect: string): Promise<string[]> {
  const client = await ZooKeeperClient.connect(connect, { sessionTimeout: 10_000, timeout: 30_000 });
  try {
    const deadline = Date.now() + SETTLE_MS;
    for (;;) {
      const nodes = await ephemeralNodes(client, '/chaos');
      if (nodes.length === 0 || Date.now() > deadline) return nodes;
      await sleep(250);
    }
  } finally {
    await client.close();
  }
}

