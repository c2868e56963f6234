import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { MultiLease, ZooKeeperClient } from '../../src/index.js';
import { MultiLock, Mutex, Semaphore } from '../../src/index.js';
import { RecipeFixture } from './fixtures.js';

// A full collection on demand, without starting the test process with --expose-gc: the flag
// set now exposes `gc` to contexts made after it.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/**
 * Heap in use by ordinary objects after two full collections (the second frees what the first's
 * finalizers released). Large-object spaces are left out: one ~0.9 MB object there comes and goes
 * between collections for rounds at a time, independent of the cycles (seen from about the 11th
 * round on, on the code before the lease diet too: 0.26 -> 1.18 -> 0.26 MB), and tipped the slope
 * over the limit. Everything a cycle could leak (signals, listeners' closures, leases, monitors,
 * map entries) is a small object in the ordinary spaces, so a leak still shows in full.
 */
function settledHeap(): number {
  gc();
  gc();
  const large = getHeapSpaceStatistics()
    .filter((space) => space.space_name.includes('large_object'))
    .reduce((sum, space) => sum + space.space_used_size, 0);
  return process.memoryUsage().heapUsed - large;
}

/** Least-squares slope of y over x. */
function slope(points: readonly { x: number; y: number }[]): number {
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const num = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  const den = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  return num / den;
}

/** Ten rounds, not six: the slope over more points weighs any one round's noise less. */
const ROUNDS = 10;
const CYCLES_PER_ROUND = 150;
/**
 * Bytes a cycle may leave behind on average. A combined signal that is never freed keeps about
 * 9.5 KB per cycle (the signal, its listener's closure, the leases and their monitors); what a
 * cycle legitimately leaves (client bookkeeping that reaches a steady size) is well under this.
 */
const MAX_BYTES_PER_CYCLE = 1000;

describe('soak: a combined lease signal is freed once the lease ends', { timeout: 300_000 }, () => {
  let zk: RecipeFixture;
  let client: ZooKeeperClient;
  before(async () => {
    zk = await RecipeFixture.start();
    client = await zk.client();
  });
  after(async () => {
    await zk?.close();
  });

  const kinds: { name: string; acquire: () => Promise<MultiLease> }[] = [
    { name: 'MultiLock', acquire: () => new MultiLock([new Mutex(client, '/soak/a'), new Mutex(client, '/soak/b')]).acquire() },
    { name: 'Semaphore leases: 2', acquire: () => new Semaphore(client, '/soak/sem', 3).acquire({ leases: 2 }) },
  ];

  /** Runs `cycle` (which registers the signal it made) in rounds: no steady heap growth, and every signal but the last collected. */
  async function soak(cycle: (signals: WeakRef<AbortSignal>[]) => Promise<void>, what: string): Promise<void> {
    const signals: WeakRef<AbortSignal>[] = [];
    // Warm-up: caches, the client's steady state, JIT.
    for (let i = 0; i < 50; i++) await cycle(signals);
    const points: { x: number; y: number }[] = [];
    for (let round = 0; round <= ROUNDS; round++) {
      if (round > 0) for (let i = 0; i < CYCLES_PER_ROUND; i++) await cycle(signals);
      points.push({ x: round * CYCLES_PER_ROUND, y: settledHeap() });
    }
    const perCycle = slope(points);
    const alive = signals.filter((ref) => ref.deref() !== undefined).length;
    assert.ok(perCycle < MAX_BYTES_PER_CYCLE, `the heap grows by ${perCycle.toFixed(0)} bytes per cycle (${points.map((p) => (p.y / 1e6).toFixed(2)).join(', ')} MB)`);
    assert.ok(alive <= 1, `${alive} of ${signals.length} ${what} are still reachable`);
  }

  for (const kind of kinds) {
    it(`${kind.name}: acquire, listen to its signal, release — no steady heap growth, every signal collected`, async () => {
      await soak(async (signals) => {
        const lease = await kind.acquire();
        // What an application does: a plain listener, never removed (the lease's end removes nothing of the caller's).
        lease.signal.addEventListener('abort', () => undefined);
        signals.push(new WeakRef(lease.signal));
        await lease.release();
      }, "released leases' signals");
    });
  }

  it("client requests bounded by a caller's AbortSignal.any that never aborts: the client lets go of it once the request is answered", async () => {
    await soak(async (signals) => {
      const signal = AbortSignal.any([new AbortController().signal]);
      signals.push(new WeakRef(signal));
      await client.exists('/', { signal });
    }, 'request signals');
  });
});
