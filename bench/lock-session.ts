import type { ZooKeeperClient } from './zklock.js';
import { Mutex, ReadWriteLock, Semaphore } from './zklock.js';
import { connectZklock } from './peers/ops-client.js';

/** What an acquire gives back. */
export interface Held {
  release(): Promise<unknown>;
}

/** One lock as a session contends for it, one acquisition at a time. */
export interface Contended {
  acquire(options: { timeout: number }): Promise<Held>;
}

/**
 * One session of a Node library, as the in-process scenarios (lock-contention.ts, herd.ts) drive
 * it: zklock's recipes, or the textbook lock on node-zookeeper-client (peers/nzk-lock.ts), which
 * has no read/write lock or semaphore.
 */
export interface NodeLockSession {
  mutex(path: string): Contended;
  readWrite?(path: string): { read: Contended; write: Contended };
  semaphore?(path: string, leases: number): Contended;
  close(): Promise<void>;
}

/** A zklock session. */
export async function zklockSession(connectString: string): Promise<NodeLockSession> {
  const client: ZooKeeperClient = await connectZklock(connectString);
  return {
    mutex: (path) => new Mutex(client, path),
    readWrite: (path) => {
      const rw = new ReadWriteLock(client, path);
      return { read: rw.readLock, write: rw.writeLock };
    },
    semaphore: (path, leases) => new Semaphore(client, path, leases),
    close: () => client.close(),
  };
}
