/**
 * Bench S2 alone, zklock builds against Curator in alternating rounds on one server (fsync on, as
 * run.ts starts it): `node --import tsx bench/s2-pair.ts <seconds> <rounds> <dist dir>...`.
 * Each round runs every zklock build given, then Curator; prints cycles/s, handoff p50 and
 * server requests per cycle (mntr) per round, then the medians.
 */
import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import type * as Zklock from '../src/index.js';
import { ZooKeeperServer } from '../src/testing/index.js';
import { summarizeHandoffs } from './lock-contention.js';
import type { LockEvent } from './peers/peer-run.js';
import { runCurator } from './peers/curator.js';
import { SERVER_PID_ENV, trafficBetween, withServerCpu } from './server-traffic.js';

const [seconds = '5', rounds = '3', ...dists] = process.argv.slice(2);
const durationMs = Number(seconds) * 1000;
const SESSIONS = 8;

const mb = Math.floor(os.totalmem() / 2 ** 20);
const dir = new URL('./results/', import.meta.url).pathname;
await mkdir(dir, { recursive: true });
await using server = await ZooKeeperServer.start({
  tickTime: 2000,
  jvmArgs: ['-XX:-UseSerialGC', '-XX:+UseG1GC', '-XX:TieredStopAtLevel=4', `-Xms${Math.floor(mb / 64)}m`, `-Xmx${Math.floor(mb / 4)}m`],
  config: { forceSync: 'yes' },
  tempDir: dir,
});
if (server.pid !== undefined) process.env[SERVER_PID_ENV] = String(server.pid);
const probe = { fourLetterWord: (w: string) => server.fourLetterWord(w), serverPid: server.pid };

interface Round {
  cps: number;
  p50: number;
  req: number;
  watches: number;
}

async function zklockRound(lib: typeof Zklock, root: string): Promise<Round> {
  const clients = await Promise.all(Array.from({ length: SESSIONS }, () => lib.ZooKeeperClient.connect(server.connectString, { sessionTimeout: 30_000 })));
  try {
    const run = async (path: string, ms: number, events?: LockEvent[]): Promise<number> => {
      const deadline = performance.now() + ms;
      let ops = 0;
      await Promise.all(clients.map(async (client, i) => {
        const mutex = new lib.Mutex(client, path);
        while (performance.now() < deadline) {
          const lease = await mutex.acquire({ timeout: 60_000 });
          events?.push([0, performance.now(), i]);
          ops++;
          events?.push([1, performance.now(), i]);
          await lease.release();
        }
      }));
      return ops;
    };
    await run(`${root}/warmup`, 1000);
    const events: LockEvent[] = [];
    const before = await withServerCpu(probe);
    const t0 = performance.now();
    const ops = await run(`${root}/lock-0`, durationMs, events);
    const wall = performance.now() - t0;
    const traffic = trafficBetween(before, await withServerCpu(probe));
    return { cps: (ops / wall) * 1000, p50: summarizeHandoffs(events).p50, req: traffic.packets / ops, watches: traffic.watchEvents / ops };
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}

async function curatorRound(root: string): Promise<Round> {
  const r = await runCurator(server.connectString, { scenario: 'contend', root, sessions: SESSIONS, locks: 1, durationMs });
  return { cps: (r.ops / r.wallMs) * 1000, p50: summarizeHandoffs(r.events!).p50, req: r.server!.packets / r.ops, watches: r.server!.watchEvents / r.ops };
}

const libs = await Promise.all(dists.map(async (d) => [d, (await import(pathToFileURL(`${d}/index.js`).href)) as typeof Zklock] as const));
const results = new Map<string, Round[]>();
const record = (name: string, r: Round): void => {
  results.set(name, [...(results.get(name) ?? []), r]);
  console.log(`${name}: ${r.cps.toFixed(0)} cycles/s, handoff p50 ${r.p50.toFixed(3)} ms, ${r.req.toFixed(2)} requests and ${r.watches.toFixed(2)} watch events per cycle`);
};
for (let round = 0; round < Number(rounds); round++) {
  for (const [name, lib] of libs) record(name, await zklockRound(lib, `/s2/${round}/${libs.findIndex(([n]) => n === name)}`));
  record('curator', await curatorRound(`/s2/${round}/curator`));
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const cur = results.get('curator')!;
for (const [name, rs] of results) {
  const cps = median(rs.map((r) => r.cps));
  const p50 = median(rs.map((r) => r.p50));
  console.log(`median ${name}: ${cps.toFixed(0)} cycles/s (${(cps / median(cur.map((r) => r.cps))).toFixed(2)}× Curator), p50 ${p50.toFixed(3)} ms (${(p50 / median(cur.map((r) => r.p50))).toFixed(2)}× Curator's), ${median(rs.map((r) => r.req)).toFixed(2)} requests/cycle`);
}
