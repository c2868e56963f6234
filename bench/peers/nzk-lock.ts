import type { NodeLockSession } from '../lock-session.js';
import { nzkConnect } from './nzk.js';
import type { NzkClient } from './nzk.js';
import { call, nzk } from './nzk.js';

const PREFIX = 'lock-';
const EMPTY = Buffer.alloc(0);

/**
 * The textbook lock (ZooKeeper's recipes page) as an application would write it on
 * node-zookeeper-client: create an ephemeral-sequential node, list the lock's children, hold if
 * ours is the lowest, else watch the next lower one with exists() and list again when it goes.
 * No reentrancy, no recovery: the least a correct queue lock does, for the bench's third column.
 */
export async function nzkLockSession(connectString: string): Promise<NodeLockSession> {
  const client = await nzkConnect(connectString);
  return {
    mutex: (path) => {
      // Created once, as an application sets up its lock path, not on every acquire.
      const ready = call<string>((cb) => client.mkdirp(path, cb));
      return {
        acquire: async ({ timeout }) => {
          await ready;
          return acquire(client, path, timeout);
        },
      };
    },
    close: () => Promise.resolve(client.close()),
  };
}

async function acquire(client: NzkClient, path: string, timeoutMs: number): Promise<{ release(): Promise<unknown> }> {
  const node = await call<string>((cb) => client.create(`${path}/${PREFIX}`, EMPTY, nzk.CreateMode.EPHEMERAL_SEQUENTIAL, cb));
  const mine = node.slice(path.length + 1);
  const until = Date.now() + timeoutMs;
  for (;;) {
    const queue = (await call<string[]>((cb) => client.getChildren(path, cb))).filter((name) => name.startsWith(PREFIX)).sort();
    const at = queue.indexOf(mine);
    if (at < 0) throw new Error(`${node} is gone from its queue`);
    if (at === 0) return { release: () => call<void>((cb) => client.remove(node, -1, cb)) };
    let wake!: () => void;
    const gone = new Promise<void>((resolve) => (wake = resolve));
    const stat = await call<unknown>((cb) => client.exists(`${path}/${queue[at - 1]!}`, () => wake(), cb));
    if (stat) await boundedWait(gone, until, `${node} not acquired within ${timeoutMs} ms`);
  }
}

async function boundedWait(gone: Promise<void>, until: number, why: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(why)), Math.max(0, until - Date.now()))));
  try {
    await Promise.race([gone, late]);
  } finally {
    clearTimeout(timer);
  }
}
