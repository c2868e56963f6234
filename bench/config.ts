/** How much work each scenario does: `--quick` for a smoke run, the default for a measurement of a few minutes. */
export interface BenchConfig {
  readonly mode: 'quick' | 'full';
  /** Operations per sequential client row (one request in flight). */
  readonly sequentialOps: number;
  /** Operations per pipelined client row. */
  readonly pipelinedOps: number;
  /** Requests in flight on one session in the pipelined rows. */
  readonly pipelineDepth: number;
  /** Untimed operations of every kind before the first row: a fresh JVM serves several times slower until its JIT has compiled the request path, and the first row must not pay for that. */
  readonly serverWarmupOps: number;
  /** Untimed operations before each timed row, so the JIT (ours, the peers', the server's) is warm. */
  readonly warmupOps: number;
  /**
   * Each client row and single-session lock row is measured this many times, peers taking turns,
   * and the median run is reported: a background burst then spoils one run, not the row.
   */
  readonly rounds: number;
  /** Acquire/release cycles of the single-session lock rows. */
  readonly lockCycles: number;
  /** Duration of each multi-session lock run. */
  readonly contendedMs: number;
  /** Runs of each multi-session lock row per peer, peers taking turns; the median is reported with the range. */
  readonly contentionRounds: number;
  /** Sessions in the contended, 8-locks and read/write rows. */
  readonly sessions: number;
  /** Sessions in the semaphore row, each looping on one semaphore of `semaphoreLeases` leases. */
  readonly semaphoreSessions: number;
  /** Leases of the semaphore row's semaphore: the most holders it may have at once. */
  readonly semaphoreLeases: number;
  /** How long each semaphore holder holds (ms): long enough for the leases to fill, so that the holder count can see an over-full semaphore. */
  readonly semaphoreHoldMs: number;
  /** Share of read acquisitions in the read/write row. */
  readonly readRatio: number;
  /** The small herd (the reference) and the large one, as sessions × waiters per session. */
  readonly herds: readonly { sessions: number; waitersPerSession: number }[];
  /** Requests issued at once against a silent server in the heap-per-request rows. */
  readonly overloadRequests: number;
  /** Requests failed at once in the event-loop-block rows. */
  readonly backlogRequests: number;
  /** Mutex paths one client holds at once, then waits on at once, in the heap-per-lease and heap-per-waiter rows. */
  readonly memoryLocks: number;
  /**
   * The long-queue rows: `waiters` (each size a multiple of `sessions`) queue on one lock from
   * `sessions` sessions of one process, one size per row and process (long-queue.ts).
   */
  readonly longQueue: { readonly sessions: number; readonly waiters: readonly number[] };
  /** Run the kazoo side (needs /usr/bin/python3 with python3-kazoo). */
  readonly kazoo: boolean;
  /** Run the Curator side in the lock rows (needs a JDK and libcurator-recipes-java). */
  readonly curator: boolean;
  /**
   * The server commits with fsync (`forceSync=yes`) into a data directory on disk, as in
   * production; false (`--no-fsync`) is the harness's test setting, which skips it.
   */
  readonly fsync: boolean;
  /** Scenario groups to run (`client`, `lock`, `overload`, `memory`, `longqueue`, `profile`, `tracing`); all when empty. */
  readonly only: ReadonlySet<string>;
  /** A directory holding another build of zklock (its dist/), which the tracing group measures beside this one. */
  readonly baseline?: string | undefined;
}

const QUICK = {
  mode: 'quick',
  sequentialOps: 2_000,
  pipelinedOps: 20_000,
  serverWarmupOps: 20_000,
  warmupOps: 500,
  rounds: 1,
  lockCycles: 500,
  contendedMs: 2_000,
  contentionRounds: 1,
  overloadRequests: 200_000,
  backlogRequests: 100_000,
  memoryLocks: 1_000,
  longQueue: { sessions: 10, waiters: [10, 100] },
  herds: [
    { sessions: 1, waitersPerSession: 10 },
    { sessions: 10, waitersPerSession: 20 },
  ],
} as const;

const FULL = {
  mode: 'full',
  sequentialOps: 5_000,
  pipelinedOps: 50_000,
  serverWarmupOps: 50_000,
  warmupOps: 2_000,
  rounds: 5,
  lockCycles: 2_000,
  contendedMs: 8_000,
  contentionRounds: 3,
  overloadRequests: 1_000_000,
  backlogRequests: 300_000,
  memoryLocks: 10_000,
  longQueue: { sessions: 100, waiters: [100, 1_000, 10_000] },
  herds: [
    { sessions: 1, waitersPerSession: 10 },
    { sessions: 50, waitersPerSession: 20 },
  ],
} as const;

const GROUPS: ReadonlySet<string> = new Set(['client', 'lock', 'semaphore', 'overload', 'memory', 'longqueue', 'profile', 'tracing']);

const USAGE = `usage: npm run bench -- [--quick] [--no-kazoo] [--no-curator] [--no-fsync] [--only client|lock|semaphore|overload|memory|longqueue|profile|tracing] [--long-queue N,…] [--baseline DIR]
  --quick      short run (about a minute), to check that everything works
  --no-kazoo   skip the Python peer
  --no-curator skip the Java peer (Apache Curator 5.4)
  --no-fsync   the server skips fsync (forceSync=no, data in the temp dir): the test setting
  --only G     run only scenario group G (client, lock, overload, memory, longqueue, profile or tracing; semaphore: the lock group's semaphore row alone); repeatable
  --long-queue N,…  the long-queue rows' sizes (waiters on the lock, each a multiple of the sessions: 100, 10 with --quick)
  --baseline D the tracing group also runs the build of zklock in D (D/dist/index.js), e.g. the commit before a change`;

export function parseArgs(argv: readonly string[]): BenchConfig {
  let quick = false;
  let kazoo = true;
  let curator = true;
  let fsync = true;
  const only = new Set<string>();
  let baseline: string | undefined;
  let longQueueWaiters: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--quick') quick = true;
    else if (arg === '--no-kazoo') kazoo = false;
    else if (arg === '--no-curator') curator = false;
    else if (arg === '--no-fsync') fsync = false;
    else if (arg === '--only' && GROUPS.has(argv[i + 1] ?? '')) only.add(argv[++i]!);
    else if (arg === '--baseline' && argv[i + 1]) baseline = argv[++i];
    else if (arg === '--long-queue' && argv[i + 1]) longQueueWaiters = argv[++i];
    else {
      console.error(USAGE);
      process.exit(arg === '--help' || arg === '-h' ? 0 : 2);
    }
  }
  const mode = quick ? QUICK : FULL;
  const waiters = longQueueWaiters === undefined ? mode.longQueue.waiters : queueSizes(longQueueWaiters, mode.longQueue.sessions);
  if (waiters === undefined) {
    console.error(`--long-queue takes sizes that are multiples of ${mode.longQueue.sessions}, comma-separated\n${USAGE}`);
    process.exit(2);
  }
  return { ...mode, longQueue: { sessions: mode.longQueue.sessions, waiters }, pipelineDepth: 1_000, sessions: 8, semaphoreSessions: 16, semaphoreLeases: 4, semaphoreHoldMs: 10, readRatio: 0.8, kazoo, curator, fsync, only, baseline };
}

/** `--long-queue`'s sizes, e.g. `100,1000`: positive whole multiples of `sessions` (each session queues as many); undefined when not. */
export function queueSizes(text: string, sessions: number): number[] | undefined {
  const sizes = text.split(',').map((size) => Number(size.replaceAll('_', '')));
  return sizes.every((size) => Number.isSafeInteger(size) && size > 0 && size % sessions === 0) ? sizes : undefined;
}
