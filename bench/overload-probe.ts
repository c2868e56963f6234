/**
 * One overload measurement in a process of its own (`node --expose-gc`), so that a heap of a
 * million requests neither lives on in the benchmark's process nor disturbs its CPU figures.
 * `bench/overload.ts` runs it; it prints one JSON object on stdout:
 *
 *   queued <connectString> <requests>    heap per request waiting for a connection (a server that
 *                                        accepts and never answers: the handshake never completes)
 *   silent <connectString> <requests>    heap per request on a live connection whose server went
 *                                        silent (a proxy black-holes both directions)
 *   readTimeout <connectString> <n>      the longest event-loop block while n requests in flight
 *                                        (maxInFlight n) fail at the read timeout
 *   close <connectString> <n>            the longest event-loop block while close() fails n
 *                                        requests issued to a silent server (default maxInFlight)
 *
 * maxQueued is n: the default would refuse most of them with OVERLOADED, which is the point of it,
 * but not what these rows measure.
 *
 * Heap (heap.ts) is measured before and after issuing the requests; the array holding the
 * promises is allocated before the first measurement, so it is not counted.
 */
import net from 'node:net';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { FaultProxy } from '../src/testing/index.js';
import { SESSION_TIMEOUT_MS } from './peers/ops-client.js';
import type { ClientOptions } from '../src/index.js';
import { ZooKeeperClient } from './zklock.js';
import { heapAfterGc } from './heap.js';

/** Issues `count` getData calls at once; returns them and the time the loop was blocked doing so. */
function issue(client: ZooKeeperClient, count: number): { promises: Promise<unknown>[]; issueMs: number } {
  const promises = new Array<Promise<unknown>>(count).fill(Promise.resolve());
  const t0 = performance.now();
  for (let i = 0; i < count; i++) promises[i] = client.getData('/zklock-bench/data');
  return { promises, issueMs: performance.now() - t0 };
}

/** A server that accepts connections and never writes a byte. */
async function mute(): Promise<{ connectString: string; close: () => void }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    connectString: `127.0.0.1:${port}`,
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

/** A connected client whose server goes silent (both directions black-holed) once connected. */
async function silenced(connectString: string, options: ClientOptions = {}): Promise<{ client: ZooKeeperClient; proxy: FaultProxy }> {
  const [host, port] = connectString.split(':');
  const proxy = await FaultProxy.start({ targetHost: host, targetPort: Number(port) });
  const client = await ZooKeeperClient.connect(proxy.connectString, { sessionTimeout: SESSION_TIMEOUT_MS, requestTimeout: 600_000, ...options });
  proxy.blackhole('both');
  return { client, proxy };
}

/** Bytes per request held while `count` requests wait; the requests are failed by close() afterwards. */
async function heapPerRequest(client: ZooKeeperClient, count: number): Promise<Record<string, number>> {
  const placeholder = new Array<Promise<unknown>>(count).fill(Promise.resolve());
  const before = heapAfterGc();
  placeholder.length = 0;
  const { promises, issueMs } = issue(client, count);
  const after = heapAfterGc();
  // Handlers before the failures, so no rejection goes unhandled.
  const settled = Promise.allSettled(promises);
  await client.close();
  await settled;
  return { bytesPerRequest: (after - before) / count, issueMs };
}

/**
 * The longest the event loop was blocked (ms) while `trigger` fails every one of `promises`,
 * and how many had failed before the measurement began (anything but 0 means it measured
 * nothing): the blocking of issuing and writing them has ended by then.
 */
async function longestBlock(promises: readonly Promise<unknown>[], trigger: () => Promise<unknown>): Promise<{ blockedMs: number; settledEarly: number }> {
  let settled = 0;
  const all = Promise.all(promises.map((p) => p.then(() => settled++, () => settled++)));
  await new Promise((resolve) => setImmediate(resolve));
  const settledEarly = settled;
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  await Promise.all([trigger(), all]);
  // The histogram records a block when its timer fires after it: a last failure that settled the
  // final promise in the same turn as a long block would otherwise go unseen.
  await new Promise((resolve) => setTimeout(resolve, 20));
  histogram.disable();
  return { blockedMs: histogram.max / 1e6, settledEarly };
}

async function main(): Promise<Record<string, unknown>> {
  const [scenario, connectString, countArg] = process.argv.slice(2);
  const count = Number(countArg);
  if (!connectString || !Number.isInteger(count)) throw new Error('usage: overload-probe <scenario> <connectString> <count>');
  switch (scenario) {
    case 'queued': {
      const server = await mute();
      const client = new ZooKeeperClient(server.connectString, { sessionTimeout: SESSION_TIMEOUT_MS, requestTimeout: 600_000, maxQueued: count });
      try {
        return await heapPerRequest(client, count);
      } finally {
        server.close();
      }
    }
    case 'silent': {
      const { client, proxy } = await silenced(connectString, { maxQueued: count });
      try {
        return await heapPerRequest(client, count);
      } finally {
        await proxy.close();
      }
    }
    case 'readTimeout': {
      // Every request on the wire; the read timeout (2/3 of the session timeout) comes once they
      // are all issued and written, which on a busy machine takes seconds.
      const { client, proxy } = await silenced(connectString, { sessionTimeout: 15_000, maxInFlight: count });
      try {
        const { promises, issueMs } = issue(client, count);
        return { ...(await longestBlock(promises, () => Promise.resolve())), issueMs };
      } finally {
        await client.close();
        await proxy.close();
      }
    }
    case 'close': {
      const { client, proxy } = await silenced(connectString, { maxQueued: count });
      try {
        const { promises, issueMs } = issue(client, count);
        return { ...(await longestBlock(promises, () => client.close())), issueMs };
      } finally {
        await proxy.close();
      }
    }
    default:
      throw new Error(`unknown scenario ${scenario}`);
  }
}

console.log(JSON.stringify(await main()));
