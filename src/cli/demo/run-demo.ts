import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LockState, ZooKeeperClient } from '../../index.js';
import { ZooKeeperError, inspectLock } from '../../index.js';
import { ZooKeeperEnsemble } from '../../testing/index.js';
import { connectClient, closeClient } from '../connection.js';
import { bounded } from '../timing.js';
import type { CheckResult } from './checks.js';
import { checkNoNodeLeft, checkNoOverlap, checkTokensIncrease, checkWorkContinued } from './checks.js';
import type { LockView } from './live-view.js';
import { Screen, renderLocks } from './live-view.js';
import { preciseNow, readRecords } from './record.js';

export interface DemoOptions {
  workers: number;
  locks: number;
  durationMs: number;
  signal: AbortSignal;
}

const MAIN = fileURLToPath(new URL('../main.js', import.meta.url));
const SESSION_TIMEOUT_MS = 8000;
const WORKER_HARD_BOUND_MS = 40_000;

/** Runs the demo; resolves true when every check passed. */
export async function runDemo(options: DemoOptions): Promise<boolean> {
  const began = Date.now();
  const tty = process.stdout.isTTY;
  const screen = new Screen(tty);
  screen.event('starting a 3-member ZooKeeper ensemble on loopback ports…');
  await using ensemble = await ZooKeeperEnsemble.start({ size: 3 });
  screen.event(`ensemble up at ${ensemble.connectString} (${((Date.now() - began) / 1000).toFixed(1)} s)`);
  const dir = mkdtempSync(join(tmpdir(), 'zklock-demo-'));
  const locks = Array.from({ length: options.locks }, (_, i) => `/zklock-demo/lock-${i + 1}`);
  const logs = Array.from({ length: options.workers }, (_, i) => join(dir, `worker-${i + 1}.jsonl`));
  const client = await connectClient({ connect: ensemble.connectString, sessionTimeout: SESSION_TIMEOUT_MS, connectTimeout: 20_000 }, options.signal);
  const workers: ChildProcess[] = [];
  try {
    const start = Date.now();
    // Workers stop when we tell them (SIGTERM); this hard bound only ends them if we die first.
    const hardStop = start + options.durationMs + WORKER_HARD_BOUND_MS;
    for (let i = 0; i < options.workers; i++) workers.push(startWorker(`worker-${i + 1}`, ensemble.connectString, locks, hardStop, logs[i] as string));
    screen.event(`${options.workers} worker processes contend for ${locks.length} locks; the leader is killed after ${(options.durationMs / 3000).toFixed(1)} s`);
    // An election can take seconds on a busy machine, so the run is stretched to show work after it, not just before.
    let stopAt = start + options.durationMs;
    let leaderKilledAt: number | undefined;
    const killLeader = sleep(options.durationMs / 3, undefined, { signal: options.signal }).then(async () => {
      const leader = await ensemble.leader();
      leaderKilledAt = preciseNow();
      await leader.kill();
      screen.event(`[${elapsed(start)}] killed the ensemble leader (member ${leader.id}, SIGKILL); sessions move to the other members`);
      const next = await ensemble.leader({ timeoutMs: 20_000 });
      stopAt = Math.max(stopAt, Date.now() + options.durationMs / 3);
      screen.event(`[${elapsed(start)}] member ${next.id} was elected leader; fencing tokens now start with its epoch`);
    });
    killLeader.catch(() => undefined);
    const exited = Promise.all(workers.map(async (w) => (w.exitCode ?? (await once(w, 'exit'))[0]) as number | null));
    let done = false;
    let stopping = false;
    void exited.finally(() => (done = true));
    while (!done) {
      if (options.signal.aborted) throw options.signal.reason;
      if (!stopping && Date.now() >= stopAt) {
        stopping = true;
        screen.event(`[${elapsed(start)}] stopping the workers (each finishes its current hold)`);
        for (const w of workers) w.kill('SIGTERM');
      }
      const views = await snapshot(client, locks, logs);
      screen.draw([`[${elapsed(start)}]`, ...renderLocks(views)]);
      await Promise.race([exited, sleep(tty ? 250 : 2000)]);
      if (Date.now() > stopAt + 30_000) throw new Error('workers did not finish within 30 s of being stopped');
    }
    await killLeader.catch((error: unknown) => screen.event(`killing the leader failed: ${String(error)}`));
    const codes = await exited;
    screen.draw([`[${elapsed(start)}] all workers finished`, ...renderLocks(await snapshot(client, locks, logs))]);
    screen.keep();
    const records = readRecords(logs);
    const results: CheckResult[] = [
      { name: 'every worker exited cleanly', ok: codes.every((c) => c === 0), detail: `exit codes ${codes.join(' ')}` },
      { name: 'locks were acquired', ok: records.length > 0, detail: `${records.length} holds in total` },
      checkWorkContinued(records, leaderKilledAt),
    ];
    for (const lock of locks) {
      results.push(checkNoOverlap(lock, records), checkTokensIncrease(lock, records), checkNoNodeLeft(lock, await settledChildren(client, lock)));
    }
    const lost = records.filter((r) => r.lost);
    if (lost.length > 0) screen.event(`${lost.length} holds ended early because the lease signalled a possible loss (${[...new Set(lost.map((r) => r.lost))].join(', ')})`);
    screen.event('\nChecks:');
    for (const r of results) screen.event(`  ${r.ok ? 'ok  ' : 'FAIL'} ${r.name}: ${r.detail}`);
    const passed = results.every((r) => r.ok);
    screen.event(`\n${passed ? 'all checks passed' : 'SOME CHECKS FAILED'} in ${((Date.now() - began) / 1000).toFixed(1)} s`);
    return passed;
  } finally {
    for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL');
    await closeClient(client);
    rmSync(dir, { recursive: true, force: true });
    await bounded(ensemble.stop(), 15_000);
  }
}

function startWorker(id: string, connect: string, locks: readonly string[], until: number, log: string): ChildProcess {
  const child = spawn(process.execPath, [MAIN, 'demo-worker', '--connect', connect, '--id', id, '--locks', locks.join(','), '--until', String(until), '--log', log, '--session-timeout', `${SESSION_TIMEOUT_MS}ms`], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return child;
}

async function snapshot(client: ZooKeeperClient, locks: readonly string[], logs: readonly string[]): Promise<LockView[]> {
  const records = readRecords(logs).sort((a, b) => a.start - b.start);
  return Promise.all(
    locks.map(async (lock) => ({ lock, state: await inspectLock(client, lock).catch((): LockState | undefined => undefined), records })),
  );
}

/**
 * The lock's children once no more should go: a worker whose close request did not get through
 * (e.g. during an election) leaves its ephemeral node until the server expires its session, so
 * we allow one session timeout (plus slack) before calling a node left behind.
 */
async function settledChildren(client: ZooKeeperClient, path: string): Promise<string[] | undefined> {
  const deadline = Date.now() + SESSION_TIMEOUT_MS + 4000;
  for (;;) {
    const children = await childrenOf(client, path);
    if (!children?.length || Date.now() > deadline) return children;
    await sleep(250);
  }
}

async function childrenOf(client: ZooKeeperClient, path: string): Promise<string[] | undefined> {
  try {
    return (await client.getChildren(path)).children;
  } catch (error) {
    if (error instanceof ZooKeeperError && error.code === 'NONODE') return undefined;
    throw error;
  }
}

function elapsed(since: number): string {
  return `${((Date.now() - since) / 1000).toFixed(1).padStart(5)} s`;
}
