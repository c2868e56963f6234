/** The records the runner keeps and the checker reads: shared by every chaos module. */

/** Which library a contender runs: ours, or a peer on the same lock paths (Apache Curator, kazoo). */
export type Language = 'zklock' | 'curator' | 'kazoo';

/** What kind of hold an operation ran under; it decides how the resource fences it. */
export type HoldKind = 'mutex' | 'multi' | 'read' | 'write' | 'semaphore';

/** One lock an operation held, with the fencing token of that lock's lease. */
export interface HeldLock {
  lock: string;
  token: string;
  /** Fenced locks (exclusive holds) must carry a token no lower than the highest accepted. */
  fenced: boolean;
}

/** One operation on the fenced resource, as the resource recorded it (times on the runner's clock). */
export interface OperationRecord {
  id: string;
  worker: string;
  process: string;
  kind: HoldKind;
  locks: HeldLock[];
  language: Language;
  /** The ZooKeeper session the locks were acquired on (hex): the unit of exclusion. */
  session: string;
  /** When the acquire resolved, on preciseNow()'s clock (every language reads CLOCK_MONOTONIC). */
  acquiredAt: number;
  /** How long the worker means to hold (zklock workers say; it lets the nemesis catch a long hold). */
  holdMs?: number;
  start: number;
  end?: number;
  /** Accepted at begin and at end: its effects stand. */
  accepted: boolean;
  rejected?: string;
  /** The LockLostError reason, when the lease's signal aborted before the worker ended the operation. */
  lost?: string;
  lostAt?: number;
}

/** Faults on a worker process or its own connections; the rest hit the ensemble. */
export const WORKER_FAULTS = ['pause-worker', 'cut-worker', 'blackhole-worker', 'expire-session'] as const;
/** Faults on whole members: killed, restarted. */
export const MEMBER_FAULTS = ['kill-member', 'kill-leader', 'restart-ensemble'] as const;
/** Faults inside the ensemble while every member runs: frozen JVMs, cut and slow member-to-member links. */
export const SERVER_FAULTS = ['freeze-member', 'isolate-leader', 'isolate-follower-from-leader', 'split-majority', 'slow-link'] as const;
export const FAULT_KINDS: readonly FaultKind[] = [...MEMBER_FAULTS, ...WORKER_FAULTS, ...SERVER_FAULTS];

export type FaultKind = (typeof WORKER_FAULTS)[number] | (typeof MEMBER_FAULTS)[number] | (typeof SERVER_FAULTS)[number];

/** An operation as the checker reads it: one still running when the run ended ends there. */
export type Interval = OperationRecord & { end: number };

/** A Curator or kazoo operation (histories from before the language field count as zklock's). */
export function isPeer(op: OperationRecord): boolean {
  return op.language === 'curator' || op.language === 'kazoo';
}

export function isWorkerFault(fault: FaultRecord): boolean {
  return (WORKER_FAULTS as readonly string[]).includes(fault.kind);
}

/**
 * Whether the session of `op` ended after it: the same logical worker's next acquire (after its
 * release) ran on another session. Its sibling on the same client may acquire during the hold,
 * on the session still alive, so it says nothing. Without a next acquire nobody can tell: false.
 */
export function sessionEndTest(ops: readonly Interval[]): (op: Interval) => boolean {
  const byWorker = new Map<string, Interval[]>();
  for (const op of [...ops].sort((x, y) => x.acquiredAt - y.acquiredAt)) {
    const list = byWorker.get(op.worker);
    if (list === undefined) byWorker.set(op.worker, [op]);
    else list.push(op);
  }
  return (op) => {
    const next = byWorker.get(op.worker)?.find((other) => other.acquiredAt > op.acquiredAt);
    return next !== undefined && next.session !== op.session;
  };
}

export interface FaultRecord {
  kind: FaultKind;
  target: string;
  start: number;
  /** When the fault was healed (member back, process resumed, traffic flowing again). */
  end: number;
  /** Set when injecting or healing failed. */
  error?: string;
}

/** Semaphore and lock layout of a run: the runner, the workers and the checker all read it. */
export const LOCKS = {
  /** Curator's layout: zklock's Mutex and Curator's InterProcessMutex contend here. */
  mutexes: ['/chaos/mutex-a', '/chaos/mutex-b'],
  /** Curator's layout: zklock's ReadWriteLock and Curator's InterProcessReadWriteLock. */
  readWrite: '/chaos/rw',
  /** Curator's InterProcessSemaphoreV2 layout, shared with zklock's Semaphore. */
  semaphore: '/chaos/sem',
  semaphoreSize: 2,
  /** kazoo's layout (`layout: 'kazoo'` on our side): kazoo's Lock, and its ReadLock/WriteLock. */
  kazooMutex: '/chaos/kazoo-mutex',
  kazooReadWrite: '/chaos/kazoo-rw',
} as const;

/** The lock paths whose holders must exclude one another (all but readers beside readers). */
export const EXCLUSIVE_PATHS: readonly string[] = [...LOCKS.mutexes, LOCKS.readWrite, LOCKS.kazooMutex, LOCKS.kazooReadWrite];

/** Milliseconds on the kernel's monotonic clock: sub-millisecond, and comparable across local processes (see src/cli/demo/record.ts). */
export function preciseNow(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
