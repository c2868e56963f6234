/**
 * zklock's side of the long-queue row, in a process of its own (`node --expose-gc` with a heap
 * limit: bench/long-queue.ts runs one per size), so that a zklock whose queue outgrows the limit
 * fails its cell instead of ending the benchmark, and the benchmark's own heap is not in the
 * figures. It runs herd.ts's herd on `sessions` zklock sessions of this process, measuring the
 * memory the queued waiters add (heap.ts's heap after gc(), and the resident set), and prints
 * the run as one JSON line:
 *
 *   long-queue-probe '{"connectString", "root", "sessions", "waitersPerSession", "boundMs"}'
 */
import { fourLetterWord } from '../src/testing/index.js';
import { heapAfterGc } from './heap.js';
import { herd } from './herd.js';
import { zklockSession } from './lock-session.js';
import { SERVER_PID_ENV } from './server-traffic.js';

export interface LongQueueProbeSpec {
  connectString: string;
  root: string;
  sessions: number;
  waitersPerSession: number;
  /** How long the queue may take to form, and a waiter to get the lock (ms). */
  boundMs: number;
}

const spec = JSON.parse(process.argv[2] ?? '') as LongQueueProbeSpec;
const port = Number(spec.connectString.split(':').at(-1));
// The benchmark's environment names the server's pid (run.ts), for its CPU time beside each mntr.
const pid = process.env[SERVER_PID_ENV];
/**
 * A four-letter word's bound here, as kazoo_bench.py's socket timeout: a server serving a queue
 * of 10,000 that lists it on every join (and this process's own collector, near its heap limit)
 * can hold an answer past the harness's 2 s, which would end the run with the measurement's
 * failure instead of the client's.
 */
const FOUR_LETTER_WORD_TIMEOUT_MS = 10_000;
const server = {
  connectString: spec.connectString,
  fourLetterWord: (word: string) => fourLetterWord(port, word, { timeoutMs: FOUR_LETTER_WORD_TIMEOUT_MS }),
  serverPid: pid === undefined ? undefined : Number(pid),
};
const memory = (): { heapBytes: number; rssBytes: number } => ({ heapBytes: heapAfterGc(), rssBytes: process.memoryUsage.rss() });
try {
  const run = await herd(server, spec.root, spec.sessions, spec.waitersPerSession, zklockSession, { memory, boundMs: spec.boundMs });
  console.log(JSON.stringify(run));
} catch (error) {
  // As the last line of stderr, which is what the failed cell's note shows (Node's own report of
  // an uncaught error ends with the error's fields and its version line instead). Exits at once:
  // waiters of a queue that failed may still hold timers.
  const code = (error as { code?: unknown }).code;
  console.error(`long-queue-probe failed: ${error instanceof Error ? error.message : String(error)}${typeof code === 'string' ? ` (${code})` : ''}`);
  process.exit(1);
}
