import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { Command, Option } from 'commander';
import { LockError, LockLostError, Mutex, ZooKeeperClient } from '../../index.js';
import { closeClient } from '../connection.js';
import { parsePositiveDuration } from '../parse-values.js';
import type { HoldRecord } from './record.js';
import { preciseNow } from './record.js';

interface WorkerFlags {
  connect: string;
  id: string;
  locks: string;
  until: string;
  log: string;
  sessionTimeout: number;
}

/** The hidden `demo-worker` command: one of the demo's contending processes. */
export function demoWorkerCommand(): Command {
  return new Command('demo-worker')
    .description('(internal) a demo worker process')
    .requiredOption('--connect <hosts>')
    .requiredOption('--id <name>')
    .requiredOption('--locks <paths>', 'comma-separated lock paths')
    .requiredOption('--until <epoch-ms>')
    .requiredOption('--log <file>')
    .addOption(new Option('--session-timeout <duration>').argParser(parsePositiveDuration).default(8000))
    .action(async (flags: WorkerFlags) => {
      await work(flags);
    });
}

async function work(flags: WorkerFlags): Promise<void> {
  const until = Number(flags.until);
  const paths = flags.locks.split(',');
  // The parent ends the run with SIGTERM: we finish the current (short) hold, give up a wait, and close the session.
  const stop = new AbortController();
  process.once('SIGTERM', () => stop.abort(new Error('stopped')));
  const client = await ZooKeeperClient.connect(flags.connect, { sessionTimeout: flags.sessionTimeout, timeout: 20_000 });
  const mutexes = paths.map((path) => new Mutex(client, path, { ownerId: flags.id }));
  try {
    while (Date.now() < until && !stop.signal.aborted) {
      const index = Math.floor(Math.random() * mutexes.length);
      const mutex = mutexes[index] as Mutex;
      let lease;
      try {
        lease = await mutex.acquire({ timeout: Math.max(1, until - Date.now()), signal: stop.signal });
      } catch (error) {
        if (error instanceof LockError && (error.code === 'LOCK_TIMEOUT' || error.code === 'ABORTED')) break;
        throw error;
      }
      const start = preciseNow();
      // "Work": hold for a while, but stop at once if the lease is lost (that is what lease.signal is for).
      await sleep(40 + Math.random() * 120, undefined, { signal: lease.signal }).catch(() => undefined);
      const end = preciseNow();
      const reason: unknown = lease.signal.reason;
      const record: HoldRecord = { worker: flags.id, lock: mutex.lockPath, node: lease.node, token: lease.fencingToken.toString(), start, end };
      if (reason instanceof LockLostError) record.lost = reason.reason;
      appendFileSync(flags.log, `${JSON.stringify(record)}\n`);
      await lease.release().catch(() => undefined);
      // A short pause lets others in and makes the queue visible in the live view.
      await sleep(Math.random() * 60);
    }
  } finally {
    await closeClient(client);
  }
}
