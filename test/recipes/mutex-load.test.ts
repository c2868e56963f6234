import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Lease } from '../../src/index.js';
import { Mutex, inspectLock } from '../../src/index.js';
import type { Interval } from './fixtures.js';
import { RecipeFixture, assertFairExclusion, recordWatchEvents, seqOf, sleep, sharedNow, within } from './fixtures.js';
import { ROUND_TRIPS_MS, WAITER_TIMEOUT_MS } from '../support/bounds.js';
import { serverWatches } from '../support/server-watches.js';
import { eventually } from '../support/wait.js';

const WORKER = fileURLToPath(new URL('./fixtures/mutex-worker.ts', import.meta.url));

/**
 * How long a worker may take: starting Node with tsx (seconds on a busy machine), its run, its
 * last acquire (bounded by its timeout) and its close.
 */
function workerBound(durationMs: number): number {
  return durationMs + WAITER_TIMEOUT_MS + ROUND_TRIPS_MS;
}

/** Runs the worker in its own process; resolves with its intervals once it printed `done` and exited 0. */
function runWorker(connectString: string, lockPath: string, durationMs: number, who: string): Promise<Interval[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', WORKER, connectString, lockPath, String(durationMs), who], { stdio: ['ignore', 'pipe', 'pipe'] });
    const intervals: Interval[] = [];
    const leaked: string[] = [];
    let done = false;
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    createInterface({ input: child.stdout }).on('line', (line) => {
      const parsed = JSON.parse(line) as Interval | { done: number; leaked: string[] };
      if ('done' in parsed) {
        done = parsed.done === intervals.length;
        leaked.push(...parsed.leaked);
      }
      else intervals.push(parsed);
    });
    const killer = setTimeout(() => child.kill('SIGKILL'), workerBound(durationMs));
    child.on('exit', (code) => {
      clearTimeout(killer);
      if (code === 0 && done && leaked.length === 0) resolve(intervals);
      else reject(new Error(`worker ${who} exited ${code} (done: ${done}, leaked: ${leaked.join(', ')}): ${stderr}`));
    });
  });
}

describe('fair mutex under load', () => {
  let zk: RecipeFixture;
  before(async () => {
    zk = await RecipeFixture.start();
  });
  after(async () => {
    await zk?.close();
  });

  it('10 sessions in 3 processes: never two holders, tokens and sequences grow in acquisition order, nothing left', async (t) => {
    const lockPath = '/load/mutex';
    // Persistent, so the sequence counter is never reset by a container reap mid-test and sequences stay comparable.
    await zk.admin.ensurePath(lockPath);
    const durationMs = 8000;
    const workers = [runWorker(zk.server.connectString, lockPath, durationMs, 'proc-a'), runWorker(zk.server.connectString, lockPath, durationMs, 'proc-b')];
    const clients = await Promise.all(Array.from({ length: 8 }, () => zk.client()));
    const local: Interval[] = [];
    // In-process holders also check exclusion without clocks: a second holder would find the slot taken.
    let holder: string | undefined;
    const stopAt = Date.now() + durationMs;
    const started = sharedNow();
    await Promise.all(
      clients.map(async (client, i) => {
        const mutex = new Mutex(client, lockPath);
        const who = `local-${i}`;
        while (Date.now() < stopAt) {
          const lease = await mutex.acquire({ timeout: WAITER_TIMEOUT_MS });
          assert.equal(holder, undefined, `${who} acquired while ${holder} held the lock`);
          holder = who;
          const start = sharedNow();
          await sleep(Math.random() * 2);
          const end = sharedNow();
          holder = undefined;
          local.push({ who, start, end, token: String(lease.fencingToken), seq: seqOf(lease.node) });
          await lease.release();
        }
      }),
    );
    const remote = (await within(Promise.all(workers), workerBound(durationMs), 'workers')).flat();
    const elapsed = (sharedNow() - started) / 1000;
    const all = [...local, ...remote];
    assert.ok(remote.length > 0 && local.length > 0, 'both the in-process and the child-process contenders got the lock');
    assertFairExclusion(all);
    t.diagnostic(`load: ${all.length} acquisitions in ${elapsed.toFixed(1)} s (${(all.length / elapsed).toFixed(0)}/s) by 10 sessions, ${remote.length} from child processes`);
    // Before closing: a close would take a leaked node away with its session.
    await zk.assertNoNodes(lockPath);
    await Promise.all(clients.map((c) => c.close()));
  });

  it('50 waiters: each release wakes the waiter behind it and at most one more (the one following the queue ahead), and they get the lock in queue order', async (t) => {
    const lockPath = '/load/herd';
    const sessions = await Promise.all(Array.from({ length: 5 }, () => zk.client()));
    // The first holder's session is none of the waiters': a waiter's watch on its node then has a session of its own.
    const first = await new Mutex(await zk.client(), lockPath).acquire();
    const acquired: Lease[] = [];
    // A wake-up is a watch notification to a waiter's session, its own node's deletion (its release) apart:
    // consecutive waiters, and the one following the queue ahead of them, are on different sessions.
    const watched = recordWatchEvents(sessions, lockPath);
    const owner = (path: string): string | undefined => {
      const lease = acquired.find((l) => l.node === path);
      return lease && `0x${lease.sessionId.toString(16)}`;
    };
    const wakeCount = (): number => watched.events.filter((event) => owner(event.path) !== event.sessionId).length;
    // The last waiter waits for 49 handoffs, each bounded by ROUND_TRIPS_MS below. Queued one at a
    // time, so that the queue goes round the sessions: started all at once, one session's creates
    // could reach the server in a row (a busy machine did that: 9 of them), and a waiter behind one
    // of its own session's nodes hears of its release in that session's own-node notification.
    const waiting: Promise<void>[] = [];
    for (let i = 0; i < 50; i++) {
      waiting.push(new Mutex(sessions[i % sessions.length]!, lockPath).acquire({ timeout: 50 * ROUND_TRIPS_MS }).then((lease) => void acquired.push(lease)));
      await eventually(async () => (await zk.children(lockPath)).length === i + 2, ROUND_TRIPS_MS, `waiter ${i} queued`);
    }
    const state = await inspectLock(zk.admin, lockPath);
    const queued = state.waiters.map((w) => w.seq);
    // Every waiter's watch on the node ahead of it is on the server before anything is released: a
    // watch asked for once that node is gone reads it gone with no event, and the count below would
    // miss the wake-up (a busy machine can take that long to get there).
    const chain = [...state.holders, ...state.waiters];
    await eventually(
      async () => {
        const watched = new Map<bigint, string[]>();
        for (const session of new Set(state.waiters.map((w) => w.sessionId))) watched.set(session, await serverWatches(zk.server, session));
        return state.waiters.every((w, i) => watched.get(w.sessionId)!.includes(chain[i]!.path));
      },
      ROUND_TRIPS_MS,
      'every waiter watches the node ahead of it',
    );
    assert.equal(wakeCount(), 0, 'nobody woken before the first release');
    const perRelease: number[] = [];
    let current = first;
    for (let i = 0; i < 50; i++) {
      const before = wakeCount();
      await current.release();
      await eventually(() => acquired.length === i + 1, ROUND_TRIPS_MS, `waiter ${i + 1} acquired`);
      // Give a stray second wake-up time to arrive before counting.
      await sleep(i % 10 === 0 ? 50 : 0);
      perRelease.push(wakeCount() - before);
      current = acquired[i]!;
    }
    await current.release();
    await within(Promise.all(waiting), ROUND_TRIPS_MS, 'all waiters settled');
    const wakes = wakeCount();
    watched.stop();
    await zk.assertNoNodes(lockPath, 'no node left while every session is still open');
    assert.deepEqual(
      acquired.map((l) => seqOf(l.node)),
      queued,
      'waiters got the lock in queue order',
    );
    // The waiter behind the released node, plus, while the queue is short enough for it to follow
    // (queue-lookahead.ts), the one behind that: never more, however long the queue. A lookahead's
    // event may land after the next holder was counted, in the next release's window: the bound
    // holds over the whole drain, and no window comes near a herd.
    assert.ok(wakes <= 2 * 50 && wakes >= 50, `wake-ups: ${wakes} for 50 releases`);
    assert.ok(
      perRelease.every((n) => n <= 4),
      `wake-ups per release: ${perRelease.join(',')}`,
    );
    t.diagnostic(`herd: ${wakes} wake-ups for 50 releases with 50 waiters`);
  });
});
