import { fileURLToPath } from 'node:url';
import type { Bench } from './context.js';
import type { Row } from './report.js';
import { runProbe } from './run-process.js';

const PROBE = fileURLToPath(new URL('./memory-probe.ts', import.meta.url));

/**
 * zklock's heap per lease held and per acquire waiting, one client holding or waiting on
 * `memoryLocks` different Mutexes (memory-probe.ts, in a child process with `--expose-gc`).
 * zklock alone: the peers are other runtimes, whose heaps are not comparable byte for byte.
 */
export async function memoryScenarios(bench: Bench): Promise<Row[]> {
  const count = bench.config.memoryLocks;
  const result = await runProbe(PROBE, [bench.connectString, `${bench.root}/memory`, String(count)]);
  const n = count.toLocaleString('en-US');
  const row = (scenario: string, value: number): Row => ({ group: 'memory', scenario, unit: 'B', better: 'lower', samples: { zklock: { value, detail: result } } });
  return [
    row(`heap per lease: 1 session holding ${n} Mutexes (acquired 100 at a time)`, result.bytesPerLease!),
    {
      ...row(`heap per waiter: 1 session waiting in ${n} queues, each behind another session's lease`, result.bytesPerWaiter!),
      note: `memory: heap (V8 used heap + ArrayBuffers, after gc()) in a child process, before and after; the Mutex objects count, as a user keeps them; waiters counted once every queue held them and the server held ${result.serverWatchesPerWaiter!.toFixed(2)} watches per waiter; every queue was empty after the releases; the ${n} leases took ${Math.round(result.acquireMs!)} ms to acquire`,
    },
  ];
}
