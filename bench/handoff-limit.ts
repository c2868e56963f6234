import { performance } from 'node:perf_hooks';
import type { Bench } from './context.js';
import { percentile } from './measure.js';
import { connectZklock } from './peers/ops-client.js';
import type { Row } from './report.js';

/**
 * The physical limit of a handoff on this server: one commit (the release's delete, fsynced)
 * and the one watch event it fires, timed from `delete()` called on one session to the event
 * arriving on another in the same process — what a lock's handoff costs when the waiter needs
 * no request of its own. No client library can hand a lock over faster on this server; the
 * contended rows' handoff p50 is compared with it.
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
      const at = await event;
      await deleted;
      if (i >= warmupOps) times.push(at - calledAt);
    }
    const row = (q: 'p50' | 'p99', value: number): Row => ({
      group: 'lock',
      scenario: `physical limit of a handoff: one delete's commit + its watch event, ${q}`,
      unit: 'ms',
      better: 'lower',
      samples: { zklock: { value } },
    });
    return [row('p50', percentile(times, 50)), row('p99', percentile(times, 99))];
  } finally {
    await Promise.all([holder.close(), waiter.close()]);
  }
}
