import { performance } from 'node:perf_hooks';
import type { Bench } from './context.js';
import { percentile } from './measure.js';
import { connectZklock } from './peers/ops-client.js';
import type { Row } from './report.js';

const EVENT_TIMEOUT_MS = 10_000;

/**
 * A reference for handoffs on this server: one commit (a delete, fsynced) and the one watch
 * event it fires, timed from `delete()` called on one session to the event arriving on another
 * in the same process — what a lock's handoff costs when the waiter needs no request of its own,
 * on a server doing nothing else. Under contention the same commit also waits for the others'
 * (the re-queueing creates), so a contended handoff sits above it; the contended handoff p50 is
 * noted against it.
 */
export async function handoffLimit(bench: Bench): Promise<Row[]> {
  const [holder, waiter] = await Promise.all([connectZklock(bench.connectString), connectZklock(bench.connectString)]);
  try {
    const parent = `${bench.root}/handoff-limit`;
    await holder.ensurePath(parent);
    const times: number[] = [];
    const { lockCycles, warmupOps } = bench.config;
    for (let i = 0; i < warmupOps + lockCycles; i++) {
      const { path } = await holder.create(`${parent}/n-`, Buffer.alloc(0), { mode: 'EPHEMERAL_SEQUENTIAL' });
      let notified!: (at: number) => void;
      const event = new Promise<number>((resolve) => (notified = resolve));
      await waiter.getData(path, { watch: () => notified(performance.now()) });
      const calledAt = performance.now();
      const deleted = holder.delete(path);
      // The delete's own failure, or an event that never comes, ends the row rather than the wait.
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no watch event within ${EVENT_TIMEOUT_MS} ms of a delete`)), EVENT_TIMEOUT_MS)));
      const at = await Promise.race([event, late, deleted.then(() => event)]).finally(() => clearTimeout(timer));
      await deleted;
      if (i >= warmupOps) times.push(at - calledAt);
    }
    const row = (q: 'p50' | 'p99', value: number): Row => ({
      group: 'lock',
      scenario: `handoff reference, idle server: one delete's commit + its watch event, ${q}`,
      unit: 'ms',
      better: 'lower',
      samples: { zklock: { value } },
    });
    return [row('p50', percentile(times, 50)), row('p99', percentile(times, 99))];
  } finally {
    await Promise.all([holder.close(), waiter.close()]);
  }
}
