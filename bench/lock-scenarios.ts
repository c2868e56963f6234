import type { WatchMessage } from './zklock.js';
import { Mutex, watchChannel } from './zklock.js';
import { SMALL, measuredSamples, timeNodeOp } from './client-scenarios.js';
import type { Bench } from './context.js';
import { handoffLimit } from './handoff-limit.js';
import type { HerdRun } from './herd.js';
import { herd } from './herd.js';
import type { Contention, ContentionSpec } from './lock-contention.js';
import { contendInProcess, summarizeHandoffs } from './lock-contention.js';
import { zklockSession } from './lock-session.js';
import { nzkLockSession } from './peers/nzk-lock.js';
import { measure, medianOf, percentile, perSecond, takeTurns } from './measure.js';
import type { Measurement } from './measure.js';
import { runCurator } from './peers/curator.js';
import { runKazoo } from './peers/kazoo.js';
import type { PeerContention, PeerHerd, PeerResult } from './peers/peer-run.js';
import { nzkOps } from './peers/nzk.js';
import type { OpsClient } from './peers/ops-client.js';
import { connectZklock, zklockOps } from './peers/ops-client.js';
import type { Peer, Row, Sample } from './report.js';
import { OTHER_LIBRARIES, sampleOf, speedup } from './report.js';
import type { ServerTraffic } from './server-traffic.js';
import { trafficRows, withTraffic } from './server-traffic.js';

export async function lockScenarios(bench: Bench): Promise<Row[]> {
  const rows: Row[] = [];
  const ceiling = await serverCeiling(bench);
  rows.push(ceiling);
  bench.log('  ceiling: done');
  rows.push(...(await uncontended(bench)));
  bench.log('  uncontended: done');
  const limit = await handoffLimit(bench);
  rows.push(...limit);
  bench.log('  handoff limit: done');
  const { sessions, contendedMs: durationMs, readRatio } = bench.config;
  const contention = await contended(bench, 'contended', `${sessions} sessions, 1 lock`, { sessions, locks: 1, durationMs }, { handoff: true, goalVsCurator: 1.5, traffic: true });
  rows.push(...contention);
  noteAgainstLimit(contention, limit);
  bench.log('  contended: done');
  rows.push(...(await contended(bench, 'independent', `${sessions} sessions, ${sessions} locks`, { sessions, locks: sessions, durationMs }, { handoff: false, traffic: true })));
  bench.log('  independent locks: done');
  rows.push(...(await herds(bench)));
  rows.push(...(await contended(bench, 'rw', `${sessions} sessions, ${readRatio * 100}% reads`, { sessions, locks: 1, durationMs, readRatio }, { handoff: false })));
  bench.log('  read/write: done');
  rows.push(...(await semaphoreScenario(bench)));
  return rows;
}

/** (g) The semaphore row alone (`--only semaphore` runs just this), with the server's requests and watch events per cycle. */
export async function semaphoreScenario(bench: Bench): Promise<Row[]> {
  const { contendedMs: durationMs, semaphoreSessions, semaphoreLeases: leases, semaphoreHoldMs: holdMs } = bench.config;
  const rows = await contended(bench, 'semaphore', `semaphore N=${leases}, ${semaphoreSessions} sessions, ${holdMs} ms holds`, { sessions: semaphoreSessions, locks: 1, durationMs, leases, holdMs }, { handoff: false, traffic: true });
  bench.log('  semaphore: done');
  return rows;
}

/** Says how far each library's handoff p50 is from the reference measured in the same run (handoff-limit.ts). */
function noteAgainstLimit(rows: Row[], limit: Row[]): void {
  const floor = limit[0]?.samples.zklock?.value;
  const p50 = rows.find((row) => row.scenario.endsWith('handoff p50'));
  if (!p50 || floor === undefined) return;
  const gap = (ms: number): string => (ms >= 0 ? `+${formatMs(ms)} ms` : `${formatMs(-ms)} ms below it`);
  const above = Object.entries(p50.samples).map(([peer, sample]) => `${peer} ${gap(sample.value - floor)}`);
  p50.note = `${p50.scenario} against the reference of ${formatMs(floor)} ms (one commit + one watch event on the idle server): ${above.join(', ')}`;
}

/** (a) What one session can get out of the server: ephemeral-sequential create + delete, one pair at a time. */
async function serverCeiling(bench: Bench): Promise<Row> {
  const { lockCycles, warmupOps } = bench.config;
  const [zklock, nzk] = [await zklockOps(bench.connectString), await nzkOps(bench.connectString)];
  try {
    const node = (client: OpsClient) => (): Promise<Measurement> => timeNodeOp(client, `${bench.root}/ceiling-${client.name}`, 'ephemeralPair', lockCycles, 1, warmupOps);
    const samples = await measuredSamples(bench, {
      zklock: node(zklock),
      nzk: node(nzk),
      kazoo: () => runKazoo(bench.connectString, { scenario: 'client', root: `${bench.root}/ceiling-kazoo`, op: 'ephemeralPair', ops: lockCycles, depth: 1, warmup: warmupOps }),
    });
    return { group: 'lock', scenario: 'server ceiling: 1 session, ephemeral-seq create+delete', unit: 'cycles/s', better: 'higher', samples };
  } finally {
    await Promise.all([zklock.close(), nzk.close()]);
  }
}

/**
 * (b) One session, no contention: zklock's Mutex; kazoo's Lock; and the least a correct queue
 * lock can do with node-zookeeper-client (create and list pipelined, then delete).
 *
 * The goal compares the Mutex with the ceiling measured right before it in the same round, on
 * another session of ours: the server speeds up by a third over a run as its JIT warms, so a ceiling
 * taken in another phase minutes earlier says more about the drift than about the lock.
 */
async function uncontended(bench: Bench): Promise<Row[]> {
  const { lockCycles, warmupOps } = bench.config;
  const client = await connectZklock(bench.connectString);
  const ops = await zklockOps(bench.connectString);
  const nzk = await nzkOps(bench.connectString);
  try {
    const mutex = new Mutex(client, `${bench.root}/mutex-zklock`);
    const mutexCycles = async (n: number): Promise<void> => {
      for (let i = 0; i < n; i++) await (await mutex.acquire()).release();
    };
    const rawPath = `${bench.root}/mutex-nzk`;
    await nzk.create(rawPath, SMALL, 'PERSISTENT').catch(() => undefined);
    // The create+delete path is warm from the server warm-up and the ceiling row; the lock paths
    // are not: without this, the first rounds measure the JIT (both processes) catching up.
    await mutexCycles(5 * warmupOps);
    await rawLockCycles(nzk, rawPath, 5 * warmupOps);
    const timed = (cycles: (n: number) => Promise<void>) => async (): Promise<Measurement & { server: ServerTraffic }> => {
      await cycles(warmupOps);
      return withTraffic(bench, () => measure(lockCycles, () => cycles(lockCycles)));
    };
    // Every run's server count, by peer: each measured run passes through here on its way to measuredSamples.
    const traffic = new Map<Peer, { ops: number; server?: ServerTraffic | undefined }[]>();
    const counted =
      <M extends Measurement & { server?: ServerTraffic | undefined }>(peer: Peer, run: () => Promise<M>) =>
      async (): Promise<M> => {
        const m = await run();
        traffic.set(peer, [...(traffic.get(peer) ?? []), m]);
        return m;
      };
    const shares: number[] = [];
    const paired: { ceiling: number; mutex: number }[] = [];
    const samples = await measuredSamples(bench, {
      zklock: counted('zklock', async () => {
        const ceiling = await timeNodeOp(ops, `${bench.root}/ceiling-alongside`, 'ephemeralPair', lockCycles, 1, warmupOps);
        const lock = await timed(mutexCycles)();
        shares.push(perSecond(lock) / perSecond(ceiling));
        paired.push({ ceiling: perSecond(ceiling), mutex: perSecond(lock) });
        return lock;
      }),
      nzk: counted('nzk', timed((n) => rawLockCycles(nzk, rawPath, n))),
      kazoo: counted('kazoo', () => runKazoo(bench.connectString, { scenario: 'mutex', root: `${bench.root}/mutex-kazoo`, ops: lockCycles, warmup: warmupOps })),
      // A fresh JVM each round: the longer warm-up the Node side gets once before its rounds.
      curator: counted('curator', () => runCurator(bench.connectString, { scenario: 'mutex', root: `${bench.root}/mutex-curator`, ops: lockCycles, warmup: 6 * warmupOps })),
    });
    const share = percentile(shares, 50);
    const label = 'uncontended: 1 session acquire+release (nzk: raw create+list+delete)';
    const throughput: Row = {
      group: 'lock',
      scenario: label,
      unit: 'cycles/s',
      better: 'higher',
      samples,
      goal: { text: `≥90% of ceiling run alongside (${(share * 100).toFixed(0)}%, rounds ${shares.map((r) => (r * 100).toFixed(0)).join('/')})`, met: share >= 0.9 },
      note: `uncontended, per round (cycles/s, ceiling → Mutex): ${paired.map((p) => `${p.ceiling.toFixed(0)} → ${p.mutex.toFixed(0)}`).join(', ')}`,
    };
    return [throughput, ...trafficRows('lock', label, traffic, false)];
  } finally {
    await Promise.all([client.close(), ops.close(), nzk.close()]);
  }
}

async function rawLockCycles(client: OpsClient, path: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const [node] = await Promise.all([client.create(`${path}/lock-`, SMALL, 'EPHEMERAL_SEQUENTIAL'), client.getChildren(path)]);
    await client.delete(node);
  }
}

/**
 * (c), (d), (f), (g): many sessions in a loop for a fixed time, zklock in this process, kazoo in
 * threads of one Python process, Curator in threads of one JVM (after an untimed second); the
 * peers take turns for `contentionRounds` rounds, and each figure (throughput, CPU, fairness,
 * each handoff percentile) is its own median over the rounds, with their range. Each run uses
 * lock paths of its own, so no run inherits a queue. With `spec.leases` the locks are
 * semaphores (zklock's Semaphore, Curator's InterProcessSemaphoreV2, kazoo's Semaphore), and
 * each side's harness counts their holders itself: see {@link mostHolders}.
 */
async function contended(bench: Bench, name: string, label: string, spec: ContentionSpec, show: { handoff: boolean; goalVsCurator?: number; traffic?: boolean }): Promise<Row[]> {
  let run = 0;
  const rootOf = (peer: Peer): string => `${bench.root}/${name}-${peer}-${++run}`;
  const peerSpec = (peer: Peer): PeerContention =>
    spec.leases === undefined ? { scenario: 'contend', root: rootOf(peer), ...spec } : { scenario: 'semaphore', root: rootOf(peer), ...spec, leases: spec.leases, holdMs: spec.holdMs ?? 0 };
  const runs = await takeTurns<Peer, Contention | PeerResult>(bench.config.contentionRounds, {
    zklock: () => contendInProcess(bench, rootOf('zklock'), spec, zklockSession),
    // The textbook lock has no read/write or semaphore form.
    ...(spec.readRatio === undefined && spec.leases === undefined ? { nzk: () => contendInProcess(bench, rootOf('nzk'), spec, nzkLockSession) } : {}),
    ...(bench.curator ? { curator: () => runCurator(bench.connectString, peerSpec('curator')) } : {}),
    ...(bench.kazoo ? { kazoo: () => runKazoo(bench.connectString, peerSpec('kazoo')) } : {}),
  }, OTHER_LIBRARIES);
  const per = (f: (r: Contention | PeerResult) => number, extra?: (median: number, rounds: readonly (Contention | PeerResult)[]) => Partial<Sample>): Partial<Record<Peer, Sample>> =>
    Object.fromEntries(
      [...runs].map(([peer, rounds]) => {
        const { value, range } = medianOf(rounds.map(f));
        return [peer, { value, range, ...extra?.(value, rounds) }];
      }),
    );
  const measurement = (r: Contention | PeerResult): Measurement => ('m' in r ? r.m : r);
  const throughput: Row = {
    group: 'lock',
    scenario: `${label}: throughput`,
    unit: 'cycles/s',
    better: 'higher',
    samples: per(
      (r) => perSecond(measurement(r)),
      (_, rounds) => ({ cpuUsPerOp: medianOf(rounds.map((r) => sampleOf(measurement(r)).cpuUsPerOp ?? Number.NaN)).value }),
    ),
  };
  // Without Curator in the run there is nothing to hold the goals against: no goal, rather than a miss.
  const ratio = speedup(throughput, 'curator');
  if (show.goalVsCurator !== undefined && ratio !== undefined) throughput.goal = { text: `≥${show.goalVsCurator}× Curator`, met: ratio >= show.goalVsCurator };
  const note = runs.get('kazoo')?.find((r): r is PeerResult => 'note' in r && r.note !== undefined)?.note;
  if (note) throughput.note = `${throughput.scenario}: ${note}`;
  const rows = [throughput];
  rows.push({
    group: 'lock',
    scenario: `${label}: fairness (fewest / most acquisitions of one session)`,
    unit: 'min/max',
    better: 'higher',
    samples: per((r) => Math.min(...(r.perSession ?? [])) / Math.max(...(r.perSession ?? []))),
  });
  if (spec.leases !== undefined) rows.push(mostHolders(label, spec.leases, runs));
  if (show.handoff) {
    for (const q of ['p50', 'p99'] as const) {
      const samples = per((r) => summarizeHandoffs(r.events ?? [])[q]);
      const row: Row = { group: 'lock', scenario: `${label}: handoff ${q}`, unit: 'ms', better: 'lower', samples };
      const faster = speedup(row, 'curator');
      if (q === 'p50' && show.goalVsCurator !== undefined && faster !== undefined) {
        row.goal = { text: `≤${(1 / show.goalVsCurator).toFixed(2)}× Curator's`, met: faster >= show.goalVsCurator };
      }
      rows.push(row);
    }
  }
  if (show.traffic) {
    const counts = new Map([...runs].map(([peer, rounds]) => [peer, rounds.map((r) => ({ ops: measurement(r).ops, server: r.server }))]));
    rows.push(...trafficRows('lock', label, counts, true));
  }
  return rows;
}

/**
 * The semaphore's invariant, checked by the harness rather than taken from the recipe: the most
 * sessions that each side's own counter saw holding one semaphore at once (entered after an
 * acquire returned, left before release was called, holding `semaphoreHoldMs` between), the highest
 * over the rounds. The goal misses if any round of any library went over the leases, or
 * reported no count.
 */
function mostHolders(label: string, leases: number, runs: ReadonlyMap<Peer, readonly (Contention | PeerResult)[]>): Row {
  const samples: Partial<Record<Peer, Sample>> = Object.fromEntries(
    [...runs].map(([peer, rounds]) => [peer, { value: Math.max(...rounds.map((r) => r.maxHolders ?? Number.NaN)) }]),
  );
  const most = Object.values(samples).map((sample) => sample.value);
  return {
    group: 'lock',
    scenario: `${label}: most holders at once (counted by the bench)`,
    unit: 'holders',
    better: 'lower',
    compare: false,
    samples,
    goal: { text: `≤ ${leases}, every round of every library`, met: most.every((value) => value <= leases) },
  };
}

/**
 * (e) Herd: a queue of waiters handed down, small (the reference) and large, for every library:
 * watch events the server sent per release (mntr, over the drain), handoff percentiles, and the
 * server's watch count once all were queued. Each library's herd is one drain, taken
 * `contentionRounds` times in turns; medians with their range.
 */
async function herds(bench: Bench): Promise<Row[]> {
  const rows: Row[] = [];
  let reference: Partial<Record<Peer, number>> | undefined;
  for (const { sessions, waitersPerSession } of bench.config.herds) {
    const waiters = sessions * waitersPerSession;
    let run = 0;
    const rootOf = (peer: Peer): string => `${bench.root}/herd-${waiters}-${peer}-${++run}`;
    const peerSpec = (peer: Peer): PeerHerd => ({ scenario: 'herd', root: rootOf(peer), sessions, waitersPerSession });
    const runs = await takeTurns<Peer, PeerResult>(bench.config.contentionRounds, {
      zklock: async () => {
        // What zklock's sessions are told, counted on zklock:client:watch for the lock's nodes (not the warm-up's).
        const root = rootOf('zklock');
        const wakes = { count: 0 };
        const count = (message: unknown): void => void ((message as WatchMessage).path.startsWith(`${root}/`) && wakes.count++);
        watchChannel.subscribe(count);
        try {
          return await herd(bench, root, sessions, waitersPerSession, zklockSession, { wakes });
        } finally {
          watchChannel.unsubscribe(count);
        }
      },
      nzk: () => herd(bench, rootOf('nzk'), sessions, waitersPerSession, nzkLockSession),
      ...(bench.curator ? { curator: () => runCurator(bench.connectString, peerSpec('curator')) } : {}),
      ...(bench.kazoo ? { kazoo: () => runKazoo(bench.connectString, peerSpec('kazoo')) } : {}),
    }, OTHER_LIBRARIES);
    const label = `${waiters} waiters (${sessions} sessions × ${waitersPerSession})`;
    bench.log(`  herd ${label}: done`);
    const per = (f: (r: PeerResult) => number): Partial<Record<Peer, Sample>> =>
      Object.fromEntries([...runs].map(([peer, rounds]) => [peer, medianOf(rounds.map(f))]));
    const row = (what: string, unit: string, samples: Partial<Record<Peer, Sample>>): Row => ({ group: 'herd', scenario: `${label}: ${what}`, unit, better: 'lower', samples });
    const events = row('watch events per release (mntr watchers fired over the drain)', 'events', per((r) => (r.server?.watchEvents ?? Number.NaN) / r.ops));
    events.goal = { text: 'exactly 1 (the next waiter\'s)', met: Object.values(events.samples).every((sample) => Math.abs(sample.value - 1) < 0.01) };
    const woken = per((r) => ((r as HerdRun).woken ?? Number.NaN) / r.ops).zklock?.value;
    events.note =
      `${events.scenario}: besides the next waiter's wake, zklock's count holds the watch each of its waiters keeps on its own node (watchOwnNode in queue/own-node.ts), ` +
      `which its own release fires, and near the head of the queue the lookahead's second wake (queue-lookahead.ts); a session's watches on one node are one server watch, so with one session these merge; ` +
      `zklock's sessions were told ${woken?.toFixed(2) ?? '?'} watch events per release (counted on its zklock:client:watch channel)`;
    const p50 = row('handoff p50', 'ms', per((r) => summarizeHandoffs(r.events ?? []).p50));
    if (reference === undefined) reference = Object.fromEntries(Object.entries(p50.samples).map(([peer, sample]) => [peer, sample.value]));
    else {
      const within = Object.entries(p50.samples).map(([peer, sample]) => `${peer} ${(sample.value / (reference?.[peer as Peer] ?? Number.NaN)).toFixed(2)}×`);
      const ours = p50.samples.zklock && reference.zklock !== undefined ? p50.samples.zklock.value / reference.zklock : Number.NaN;
      p50.goal = { text: `zklock within 1.2× its ${formatMs(reference.zklock ?? Number.NaN)} ms at the small queue`, met: ours <= 1.2 };
      p50.note = `${p50.scenario} against each library's own at the small queue: ${within.join(', ')}`;
    }
    rows.push(events, p50, row('handoff p99', 'ms', per((r) => summarizeHandoffs(r.events ?? []).p99)), row('server watches while queued (wchs)', 'watches', per((r) => r.queuedWatches ?? Number.NaN)));
  }
  return rows;
}

function formatMs(ms: number): string {
  return ms.toPrecision(3);
}
