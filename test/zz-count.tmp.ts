import { Mutex, Semaphore, ZooKeeperClient, requestChannel } from '/work/wt/d-lease/src/index.js';
import type { RequestMessage } from '/work/wt/d-lease/src/index.js';
import { ZooKeeperServer } from '/work/wt/d-lease/src/testing/index.js';
const TREE = new Set(['create', 'delete', 'exists', 'getData', 'setData', 'getChildren', 'multi', 'multiRead', 'setACL', 'removeWatches', 'sync']);
const counts = new Map<string, number>();
requestChannel.start.subscribe((m: unknown) => { const { op } = m as RequestMessage; if (TREE.has(op)) counts.set(op, (counts.get(op) ?? 0) + 1); });
const server = await ZooKeeperServer.start();
const cs = await Promise.all([0, 1].map(() => ZooKeeperClient.connect(server.connectString)));
async function measure(name: string, cycles: number, run: () => Promise<void>) {
  await run(); counts.clear();
  for (let i = 0; i < cycles; i++) await run();
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  console.log(name, (total / cycles).toFixed(2), JSON.stringify(Object.fromEntries([...counts].map(([k, v]) => [k, +(v / cycles).toFixed(2)]))));
}
const m = new Mutex(cs[0]!, '/s1');
await measure('S1 mutex, nobody looks', 200, async () => { const l = await m.acquire(); await l.release(); });
await measure('S1 mutex, signal looked at', 200, async () => { const l = await m.acquire(); void l.signal; await l.release(); });
const sem = new Semaphore(cs[0]!, '/sem', 2);
await measure('semaphore, nobody looks', 100, async () => { const l = await sem.acquire(); await l.release(); });
const ms = cs.map((c) => new Mutex(c, '/s2'));
await measure('S2 2 sessions x 1 cycle each (per cycle)', 100, async () => {
  await Promise.all(ms.map(async (mx) => { const l = await mx.acquire(); await new Promise((r) => setTimeout(r, 1)); await l.release(); }));
});
for (const c of cs) await c.close();
await server.close();
