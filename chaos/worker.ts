/**
 * A chaos worker process: its own client and session, running one or two logical workers that
 * share it. Each loops: acquire a lock picked by its seeded PRNG, begin an operation on the fenced
 * resource, hold for a while (stopping early if the lease's signal aborts), end the operation,
 * release. Started by the runner with one JSON argument and an IPC channel: on `stop` it finishes
 * its loops (releasing everything) and reports `idle`, so the runner can look for leaked contender
 * nodes while the session is still alive; on `close` it closes the client and reports its stats.
 */
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import type { Lease, MultiLease } from '../src/index.js';
import { LockLostError, MultiLock, Mutex, ReadWriteLock, Semaphore, ZooKeeperClient } from '../src/index.js';
import type { BeginRequest, EndRequest, ResourceReply } from './fenced-resource.js';
import type { HeldLock, HoldKind } from './history.js';
import { LOCKS, preciseNow } from './history.js';
import { Prng } from './prng.js';

export interface WorkerConfig {
  name: string;
  connect: string;
  logicalWorkers: number;
  seed: number;
  resourceUrl: string;
  sessionTimeout: number;
}

/** Messages from the runner, and to it. */
export type RunnerMessage = { type: 'stop' } | { type: 'close' };
export type WorkerMessage = { type: 'idle' } | { type: 'stats'; stats: WorkerStats };

/** What a worker reports once closed, for the report. */
export interface WorkerStats {
  name: string;
  acquisitions: number;
  acquireErrors: Record<string, number>;
}

const ACQUIRE_TIMEOUT_MS = 10_000;
const RESOURCE_TIMEOUT_MS = 5_000;
const CLOSE_TIMEOUT_MS = 5_000;
const RELEASE_TIMEOUT_MS = 30_000;
/** A runner that never says `close` (it died) must not leave us running. */
const IDLE_TIMEOUT_MS = 120_000;

interface Hold {
  kind: HoldKind;
  locks: HeldLock[];
  acquiredAt: number;
  /** The session the lease was granted on: the client's current one as the acquire resolves. */
  session: string;
  signal: AbortSignal;
  release(): Promise<void>;
}

const config = JSON.parse(process.argv[2] ?? '{}') as WorkerConfig;
const stop = new AbortController();
const closing = new AbortController();
process.on('message', (message: RunnerMessage) => (message.type === 'stop' ? stop : closing).abort());
process.once('disconnect', () => {
  stop.abort();
  closing.abort();
});
const stats: WorkerStats = { name: config.name, acquisitions: 0, acquireErrors: {} };

const client = await ZooKeeperClient.connect(config.connect, { sessionTimeout: config.sessionTimeout, timeout: 30_000 });
try {
  await Promise.all(Array.from({ length: config.logicalWorkers }, (_, i) => loop(`${config.name}.${i + 1}`, new Prng(config.seed).fork(i))));
  send({ type: 'idle' });
  await sleep(IDLE_TIMEOUT_MS, undefined, { signal: closing.signal }).catch(() => undefined);
} finally {
  // close() ends the session at once; bounded because the ensemble may be down at the end.
  await bounded(client.close(), CLOSE_TIMEOUT_MS);
  send({ type: 'stats', stats });
  if (process.connected) process.disconnect();
}

/** Waits for `work` at most `ms`, ignoring its outcome; the timer does not keep the process alive. */
async function bounded(work: Promise<unknown>, ms: number): Promise<void> {
  await Promise.race([work.catch(() => undefined), sleep(ms, undefined, { ref: false })]);
}

function send(message: WorkerMessage): void {
  if (process.connected) process.send?.(message);
}

async function loop(worker: string, prng: Prng): Promise<void> {
  const owner = { ownerId: worker };
  // Curator's layout on the shared paths (Curator workers contend there), kazoo's on kazoo's paths.
  const mutexes = [...LOCKS.mutexes.map((path) => new Mutex(client, path, owner)), new Mutex(client, LOCKS.kazooMutex, { ...owner, layout: 'kazoo' })];
  const rws = [new ReadWriteLock(client, LOCKS.readWrite, owner), new ReadWriteLock(client, LOCKS.kazooReadWrite, { ...owner, layout: 'kazoo' })];
  const semaphore = new Semaphore(client, LOCKS.semaphore, LOCKS.semaphoreSize, owner);
  const multi = new MultiLock(LOCKS.mutexes.map((path) => new Mutex(client, path, owner)));
  let n = 0;
  while (!stop.signal.aborted) {
    const kind = prng.pick<HoldKind>(['mutex', 'mutex', 'multi', 'read', 'read', 'write', 'semaphore', 'semaphore']);
    const options = { timeout: ACQUIRE_TIMEOUT_MS, signal: stop.signal };
    let hold: Hold;
    try {
      if (kind === 'mutex') hold = single(kind, await prng.pick(mutexes).acquire(options), true);
      else if (kind === 'read') hold = single(kind, await prng.pick(rws).readLock.acquire(options), false);
      else if (kind === 'write') hold = single(kind, await prng.pick(rws).writeLock.acquire(options), true);
      else if (kind === 'semaphore') hold = single(kind, await semaphore.acquire(options), false);
      else hold = several(await multi.acquire(options));
    } catch (error) {
      if (stop.signal.aborted) break;
      const code = (error as { code?: string }).code ?? (error as Error).name;
      stats.acquireErrors[code] = (stats.acquireErrors[code] ?? 0) + 1;
      await sleep(100 + prng.next() * 200);
      continue;
    }
    stats.acquisitions++;
    // One hold in eight is long, so that a fault finds holders in the middle of their work: the
    // lost-lease check (the signal before the next holder) needs leases lost while held.
    const holdMs = prng.next() < 1 / 8 ? prng.between(0.5, 1.5) * config.sessionTimeout : prng.between(20, 150);
    await operate(`${worker}#${++n}`, worker, hold, holdMs);
    // Release retries across reconnects until the session is gone; a bound keeps the loop going
    // even so, and the leak check would then find the node.
    await bounded(hold.release(), RELEASE_TIMEOUT_MS);
    await sleep(prng.next() * 50);
  }
}

function single(kind: HoldKind, lease: Lease, fenced: boolean): Hold {
  return { kind, locks: [{ lock: lease.lockPath, token: lease.fencingToken.toString(), fenced }], ...granted(), signal: lease.signal, release: () => lease.release() };
}

function several(lease: MultiLease): Hold {
  const locks = lease.leases.map((l) => ({ lock: l.lockPath, token: l.fencingToken.toString(), fenced: true }));
  return { kind: 'multi', locks, ...granted(), signal: lease.signal, release: () => lease.release() };
}

function granted(): { acquiredAt: number; session: string } {
  return { acquiredAt: preciseNow(), session: client.sessionId.toString(16) };
}

async function operate(id: string, worker: string, hold: Hold, holdMs: number): Promise<void> {
  let lost: { reason: string; at: number } | undefined;
  const onAbort = (): void => {
    const reason: unknown = hold.signal.reason;
    lost = { reason: reason instanceof LockLostError ? reason.reason : String(reason), at: preciseNow() };
  };
  if (hold.signal.aborted) onAbort();
  else hold.signal.addEventListener('abort', onAbort, { once: true });
  const begin: BeginRequest = {
    id,
    worker,
    process: config.name,
    kind: hold.kind,
    locks: hold.locks,
    language: 'zklock',
    session: hold.session,
    acquiredAt: hold.acquiredAt,
    holdMs,
  };
  try {
    const reply = await call('/begin', begin);
    // The "work": stop at once when the lease is lost, as a well-behaved client must.
    if (reply.accepted) await sleep(holdMs, undefined, { signal: hold.signal }).catch(() => undefined);
  } finally {
    // Let pending socket events land, so a loss already known to the client is seen before we commit.
    await nextTurn();
    hold.signal.removeEventListener('abort', onAbort);
    const end: EndRequest = lost ? { id, lost: lost.reason, lostAt: lost.at } : { id };
    await call('/end', end).catch(() => undefined);
  }
}

async function call(path: string, body: BeginRequest | EndRequest): Promise<ResourceReply> {
  const response = await fetch(`${config.resourceUrl}${path}`, {
    method: 'POST',
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(RESOURCE_TIMEOUT_MS),
  });
  return (await response.json()) as ResourceReply;
}
