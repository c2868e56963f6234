import { setTimeout as sleep } from 'node:timers/promises';
import type { FencedResource } from '../../chaos/fenced-resource.js';
import type { HoldKind } from '../../chaos/history.js';
import { LOCKS, preciseNow } from '../../chaos/history.js';
import { Prng } from '../../chaos/prng.js';
import type { WorkerStats } from '../../chaos/worker.js';
import type { Lease, ZooKeeperClient } from '../../src/index.js';
import { Mutex, ReadWriteLock, Semaphore } from '../../src/index.js';

const ACQUIRE_TIMEOUT_MS = 10_000;

/**
 * zklock's side of the peers' test, in the test process: the locks chaos/worker.ts takes on the
 * peers' paths (Curator's layout on Curator's, kazoo's on kazoo's), each hold reported to the
 * resource directly, until `signal` aborts. Resolves with the same stats a worker reports.
 */
export async function contendWithZklock(client: ZooKeeperClient, resource: FencedResource, name: string, seed: number, signal: AbortSignal): Promise<WorkerStats> {
  const worker = `${name}.1`;
  const owner = { ownerId: worker };
  const mutexes = [new Mutex(client, LOCKS.mutexes[0], owner), new Mutex(client, LOCKS.kazooMutex, { ...owner, layout: 'kazoo' })];
  const rws = [new ReadWriteLock(client, LOCKS.readWrite, owner), new ReadWriteLock(client, LOCKS.kazooReadWrite, { ...owner, layout: 'kazoo' })];
  const semaphore = new Semaphore(client, LOCKS.semaphore, LOCKS.semaphoreSize, owner);
  const prng = new Prng(seed);
  const stats: WorkerStats = { name, acquisitions: 0, acquireErrors: {} };
  let n = 0;
  while (!signal.aborted) {
    const kind = prng.pick<HoldKind>(['mutex', 'mutex', 'read', 'read', 'write', 'semaphore']);
    const options = { timeout: ACQUIRE_TIMEOUT_MS, signal };
    let lease: Lease;
    try {
      if (kind === 'mutex') lease = await prng.pick(mutexes).acquire(options);
      else if (kind === 'read') lease = await prng.pick(rws).readLock.acquire(options);
      else if (kind === 'write') lease = await prng.pick(rws).writeLock.acquire(options);
      else lease = await semaphore.acquire(options);
    } catch (error) {
      if (signal.aborted) break;
      const code = (error as { code?: string }).code ?? (error as Error).name;
      stats.acquireErrors[code] = (stats.acquireErrors[code] ?? 0) + 1;
      await sleep(100 + prng.next() * 200);
      continue;
    }
    const acquiredAt = preciseNow();
    stats.acquisitions++;
    const id = `${worker}#${++n}`;
    const held = { lock: lease.lockPath, token: lease.fencingToken.toString(), fenced: kind === 'mutex' || kind === 'write' };
    const reply = resource.begin({ id, worker, process: name, kind, locks: [held], language: 'zklock', session: client.sessionId.toString(16), acquiredAt });
    if (reply.accepted) await sleep(prng.between(20, 150));
    resource.end({ id });
    await lease.release();
    await sleep(prng.next() * 50);
  }
  return stats;
}
