import { performance } from 'node:perf_hooks';

/** One timed run: wall time and this process's CPU time (user + system) over `ops` operations. */
export interface Measurement {
  readonly ops: number;
  readonly wallMs: number;
  readonly cpuUs: number;
}

/** Times `body`, which performs `ops` operations. Everything in this process counts as client CPU, so run nothing else meanwhile. */
export async function measure(ops: number, body: () => Promise<void>): Promise<Measurement> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await body();
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { ops, wallMs, cpuUs: cpu.user + cpu.system };
}

export function perSecond(m: Measurement): number {
  return m.ops / (m.wallMs / 1000);
}

export function cpuPerOp(m: Measurement): number {
  return m.cpuUs / m.ops;
}

/**
 * Runs `op` for i = 0..total-1 with `depth` calls in flight: `depth` workers each await their
 * own calls in turn, so a slot is refilled as soon as its reply arrives (a sliding window, never
 * a drained batch). `worker` lets an op use a resource of its own, e.g. a node path.
 */
export async function inFlight(total: number, depth: number, op: (i: number, worker: number) => Promise<unknown>): Promise<void> {
  const workers = Math.min(depth, total);
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      for (let i = worker; i < total; i += workers) await op(i, worker);
    }),
  );
}

/** Why a contestant allowed to fail was left out of a row (its process died, say): the report's notes. */
export const leftOut: string[] = [];

/**
 * Runs each contestant `rounds` times, taking turns (a, b, c, b, c, a, …) so that slow phases of
 * a shared machine hit everyone alike; returns every run of each. A contestant named in `mayFail`
 * (a peer) whose run throws is left out of the row, its other rounds too, and the reason goes to
 * `leftOut`: one peer's failure does not cost the whole run. Anyone else's failure ends it.
 */
export async function takeTurns<K extends string, R>(rounds: number, contestants: Partial<Record<K, () => Promise<R>>>, mayFail: ReadonlySet<string> = new Set()): Promise<Map<K, R[]>> {
  const runs = new Map<K, R[]>();
  const out = new Set<K>();
  const entries = Object.entries(contestants) as [K, () => Promise<R>][];
  for (let round = 0; round < rounds; round++) {
    // Who goes first changes every round, so nobody always runs right after a heavy neighbour.
    const order = [...entries.slice(round % entries.length), ...entries.slice(0, round % entries.length)];
    for (const [name, run] of order) {
      if (out.has(name)) continue;
      try {
        runs.set(name, [...(runs.get(name) ?? []), await run()]);
      } catch (error) {
        if (!mayFail.has(name)) throw error;
        out.add(name);
        runs.delete(name);
        leftOut.push(`${name}, round ${round + 1}: ${(error instanceof Error ? error.message : String(error)).split('\n')[0]}`);
      }
    }
  }
  return runs;
}

/** {@link takeTurns}, keeping each contestant's median run by throughput. */
export async function medianRuns<K extends string>(rounds: number, contestants: Partial<Record<K, () => Promise<Measurement>>>, mayFail?: ReadonlySet<string>): Promise<Partial<Record<K, Measurement>>> {
  const medians: Partial<Record<K, Measurement>> = {};
  for (const [name, list] of await takeTurns(rounds, contestants, mayFail)) {
    const sorted = [...list].sort((a, b) => perSecond(a) - perSecond(b));
    medians[name] = sorted[Math.floor(sorted.length / 2)]!;
  }
  return medians;
}

/** The median of some rounds' values with their smallest and largest (rounds that measured nothing left out). */
export function medianOf(values: readonly number[]): { value: number; range: { min: number; max: number } } {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  return { value: sorted[Math.floor(sorted.length / 2)] ?? Number.NaN, range: { min: sorted[0] ?? Number.NaN, max: sorted.at(-1) ?? Number.NaN } };
}

/** The p-th percentile (0..100) by nearest rank; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
