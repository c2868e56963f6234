import type { ChildProcess } from 'node:child_process';
import type { RunnerMessage, WorkerStats } from './worker.js';

/** What the runner drives in a contender process, zklock's worker (WorkerPool's WorkerProcess) or a peer. */
export interface ContenderProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** Reported `idle`: stopped looping, everything released, the session still open. */
  idle: boolean;
  /** The stats it reported on `close`. */
  stats: WorkerStats | undefined;
  send(message: RunnerMessage): void;
}
