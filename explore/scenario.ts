import fc from 'fast-check';

/**
 * The explorer's model: one scenario is a few clients, actors (a lock object of some kind on a
 * client) contending for one family of locks on the scenario's own path, a schedule of the calls
 * a user makes and of outside events, and request-level faults per client. Everything here is
 * plain data, so fast-check can generate it from a seed, shrink it, and print it.
 */

/** Locks that exclude each other: every actor of a scenario takes one lock of its family. */
export type Family = 'mutex' | 'rw' | 'semaphore' | 'simple' | 'multi';

export type ActorKind = 'Mutex' | 'NonReentrantMutex' | 'ReadLock' | 'WriteLock' | 'Semaphore' | 'SimpleLock' | 'MultiLock' | 'MutexA' | 'MutexB';

export interface Actor {
  /** The client slot it uses (actors of one slot share one client). */
  readonly client: number;
  readonly kind: ActorKind;
  /** Leases a semaphore actor takes at once (1: a plain Lease). */
  readonly leases: number;
  readonly revocable: boolean;
}

/** A lease's hold limit. */
export interface MaxHold {
  readonly maxHold: number;
  readonly forceReleaseAfter?: number;
}

export type Step =
  | {
      readonly op: 'acquire';
      readonly actor: number;
      readonly timeout?: number;
      /** Aborts the call's signal this many ms after it started. */
      readonly abortAfter?: number;
      readonly maxHold?: MaxHold;
      /** Ms the lease is held before its release. */
      readonly hold: number;
      /** Whether the holder looks at `lease.signal` when it gets the lease (a look sets the lease's watch). */
      readonly look: boolean;
      /** For a write lease: downgrade it this many ms into the hold. */
      readonly downgradeAfter?: number;
    }
  | { readonly op: 'tryAcquire'; readonly actor: number; readonly hold: number; readonly look: boolean; readonly abortAfter?: number }
  | { readonly op: 'runExclusive'; readonly actor: number; readonly timeout?: number; readonly hold: number; readonly reenter: boolean }
  | { readonly op: 'wait'; readonly ms: number }
  /** The operator deletes the `which`-th node (modulo their number) of the scenario, as `zklock release --force` does. */
  | { readonly op: 'forceDelete'; readonly which: number }
  | { readonly op: 'revoke'; readonly which: number }
  /** The client's session is closed from outside (its id and password over another connection): the server deletes its nodes. */
  | { readonly op: 'expire'; readonly client: number }
  /** The event loop is blocked for `ms`. */
  | { readonly op: 'stall'; readonly ms: number }
  | { readonly op: 'close'; readonly client: number }
  /** A new client in the slot (after a close: the slot's actors use it from then on). */
  | { readonly op: 'reopen'; readonly client: number }
  /**
   * Ensemble only (`--ensemble`), for `ms` while the schedule goes on: member `member` (mod their
   * number) frozen (SIGSTOP, its sockets open), or follower `member` (mod theirs) cut from the leader.
   */
  | { readonly op: 'freeze' | 'cutFromLeader'; readonly member: number; readonly ms: number };

/** `expire`: the session is closed from outside as the request leaves the client; the request reaches the server after that. */
export type FaultVerdict = 'drop' | 'lose-reply' | 'reset' | 'expire' | { readonly delay: number };

/** The `nth` request (from 1, over every connection) that a client sends meets `verdict`. */
export interface Fault {
  readonly client: number;
  readonly nth: number;
  readonly verdict: FaultVerdict;
}

export interface Scenario {
  readonly family: Family;
  /** The semaphore's N. */
  readonly permits: number;
  /** Mutex lockDelay for the family (every contender on a path the same), 0 = off. */
  readonly lockDelay: number;
  readonly clients: number;
  /** The client slot whose connect string names a chroot that does not exist (-1: none). */
  readonly missingChroot: number;
  readonly actors: readonly Actor[];
  readonly steps: readonly Step[];
  readonly faults: readonly Fault[];
  /** The replies to these requests (the `nth` of a client) reach it late, and all after them on that connection. */
  readonly replyDelays: readonly { readonly client: number; readonly nth: number; readonly ms: number }[];
  /** Sessions three times the explorer's short timeout: what a short one hides (a silent connection detected late). */
  readonly longSessions: boolean;
}

const KINDS: Record<Family, readonly ActorKind[]> = {
  mutex: ['Mutex', 'NonReentrantMutex'],
  rw: ['ReadLock', 'WriteLock'],
  semaphore: ['Semaphore'],
  simple: ['SimpleLock'],
  multi: ['MultiLock', 'MutexA', 'MutexB'],
};

const MAX_CLIENTS = 3;
const MAX_ACTORS = 4;

const hold = fc.integer({ min: 0, max: 800 });
const maxHold: fc.Arbitrary<MaxHold | undefined> = fc.option(
  fc.record({ maxHold: fc.integer({ min: 50, max: 600 }), forceReleaseAfter: fc.option(fc.integer({ min: 1, max: 400 }), { nil: undefined }) }, { requiredKeys: ['maxHold'] }),
  { nil: undefined, freq: 3 },
);

/** Member faults, for an ensemble: long enough to cost a session (up to twice the short timeout) or not. */
const memberFaults: fc.WeightedArbitrary<Step>[] = (['freeze', 'cutFromLeader'] as const).map((op) => ({
  weight: 1,
  arbitrary: fc.record({ op: fc.constant(op), member: fc.nat(2), ms: fc.integer({ min: 200, max: 4000 }) }),
}));

function stepArb(actors: number, clients: number, ensemble: boolean): fc.Arbitrary<Step> {
  const actor = fc.integer({ min: 0, max: actors - 1 });
  const client = fc.integer({ min: 0, max: clients - 1 });
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record(
        {
          op: fc.constant('acquire' as const),
          actor,
          timeout: fc.option(fc.integer({ min: 1, max: 2500 }), { nil: undefined }),
          abortAfter: fc.option(fc.integer({ min: 0, max: 1500 }), { nil: undefined, freq: 3 }),
          maxHold,
          hold,
          look: fc.boolean(),
          downgradeAfter: fc.option(fc.integer({ min: 0, max: 400 }), { nil: undefined }),
        },
        { requiredKeys: ['op', 'actor', 'hold', 'look'] },
      ),
    },
    {
      weight: 2,
      arbitrary: fc.record(
        { op: fc.constant('tryAcquire' as const), actor, hold, look: fc.boolean(), abortAfter: fc.option(fc.integer({ min: 0, max: 800 }), { nil: undefined, freq: 3 }) },
        { requiredKeys: ['op', 'actor', 'hold', 'look'] },
      ),
    },
    {
      weight: 2,
      arbitrary: fc.record(
        { op: fc.constant('runExclusive' as const), actor, timeout: fc.option(fc.integer({ min: 1, max: 2500 }), { nil: undefined }), hold, reenter: fc.boolean() },
        { requiredKeys: ['op', 'actor', 'hold', 'reenter'] },
      ),
    },
    { weight: 5, arbitrary: fc.record({ op: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 700 }) }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('forceDelete' as const), which: fc.nat(7) }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('revoke' as const), which: fc.nat(7) }) },
    // A session's end while calls are on their way is where most of the defects reviewers found
    // lay (a re-queue between two sessions, a lease handed out already lost): three times the
    // weight of the other outside events, as the `expire` request fault has twice the others'.
    { weight: 3, arbitrary: fc.record({ op: fc.constant('expire' as const), client }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('stall' as const), ms: fc.integer({ min: 50, max: 1200 }) }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('close' as const), client }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('reopen' as const), client }) },
    // Appended, and only with an ensemble: a standalone search draws what it drew before.
    ...(ensemble ? memberFaults : []),
  );
}

const verdict: fc.Arbitrary<FaultVerdict> = fc.oneof(
  { weight: 1, arbitrary: fc.constant('drop' as const) },
  { weight: 1, arbitrary: fc.constant('lose-reply' as const) },
  { weight: 1, arbitrary: fc.constant('reset' as const) },
  { weight: 1, arbitrary: fc.record({ delay: fc.integer({ min: 50, max: 1500 }) }) },
  { weight: 2, arbitrary: fc.constant('expire' as const) },
);

/**
 * Every scenario the explorer may run; shrinks towards fewer clients, actors, steps and faults.
 * Indexes (an actor's client, a step's actor) are drawn unbounded and taken modulo the counts, so
 * that every part shrinks on its own (a `chain` from counts to parts would shrink poorly).
 */
export function scenarioArbitrary(ensemble: boolean): fc.Arbitrary<Scenario> {
  return fc
    .record({
      family: fc.constantFrom<Family>('mutex', 'rw', 'semaphore', 'simple', 'multi'),
      permits: fc.integer({ min: 1, max: 3 }),
      lockDelay: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 50, max: 400 }) }),
      clients: fc.integer({ min: 1, max: MAX_CLIENTS }),
      missingChroot: fc.oneof({ weight: 12, arbitrary: fc.constant(-1) }, { weight: 1, arbitrary: fc.nat(MAX_CLIENTS - 1) }),
      actors: fc.array(fc.record({ client: fc.nat(MAX_CLIENTS - 1), kind: fc.nat(2), leases: fc.nat(2), revocable: fc.boolean() }), { minLength: 1, maxLength: MAX_ACTORS }),
      steps: fc.array(stepArb(MAX_ACTORS, MAX_CLIENTS, ensemble), { minLength: 1, maxLength: 12 }),
      faults: fc.array(fc.record({ client: fc.nat(MAX_CLIENTS - 1), nth: fc.integer({ min: 1, max: 30 }), verdict }), { maxLength: 3 }),
      // Last: a field added at the end leaves the scenarios of earlier seeds as they were.
      longSessions: fc.boolean(),
      replyDelays: fc.array(fc.record({ client: fc.nat(MAX_CLIENTS - 1), nth: fc.integer({ min: 1, max: 30 }), ms: fc.integer({ min: 50, max: 1500 }) }), { maxLength: 2 }),
    })
    .map(({ family, permits, lockDelay, clients, missingChroot, actors, steps, faults, longSessions, replyDelays }) => {
      const kinds = KINDS[family];
      return {
        family,
        permits,
        lockDelay: family === 'mutex' || family === 'multi' ? lockDelay : 0,
        clients,
        missingChroot: missingChroot < 0 ? -1 : missingChroot % clients,
        actors: actors.map((a) => ({ client: a.client % clients, kind: kinds[a.kind % kinds.length]!, leases: 1 + (a.leases % permits), revocable: a.revocable })),
        steps: steps.map((step): Step => {
          if ('actor' in step) return { ...step, actor: step.actor % actors.length };
          if ('client' in step) return { ...step, client: step.client % clients };
          return step;
        }),
        faults: faults.map((f) => ({ ...f, client: f.client % clients })),
        longSessions,
        replyDelays: replyDelays.map((d) => ({ ...d, client: d.client % clients })),
      };
    });
}

/** The standalone server's scenarios. */
export const scenarioArb: fc.Arbitrary<Scenario> = scenarioArbitrary(false);

function verdictText(v: FaultVerdict): string {
  if (v === 'expire') return 'session expired from outside before it reaches the server';
  return typeof v === 'string' ? v : `delay ${v.delay} ms`;
}

function actorText(a: Actor, i: number): string {
  const extra = [a.kind === 'Semaphore' && a.leases > 1 ? `leases: ${a.leases}` : '', a.revocable ? 'revocable' : ''].filter(Boolean).join(', ');
  return `A${i} = ${a.kind} on client C${a.client}${extra ? ` (${extra})` : ''}`;
}

/** One step as a line a reader can follow. */
export function stepText(step: Step): string {
  switch (step.op) {
    case 'acquire': {
      const opts = [
        step.timeout !== undefined ? `timeout ${step.timeout}` : 'no timeout',
        step.abortAfter !== undefined ? `abort after ${step.abortAfter} ms` : '',
        step.maxHold ? `maxHold ${step.maxHold.maxHold}${step.maxHold.forceReleaseAfter !== undefined ? ` forceReleaseAfter ${step.maxHold.forceReleaseAfter}` : ''}` : '',
        step.look ? 'looks at signal' : '',
        step.downgradeAfter !== undefined ? `downgrade after ${step.downgradeAfter} ms (write lease)` : '',
      ].filter(Boolean);
      return `A${step.actor}.acquire(${opts.join(', ')}), hold ${step.hold} ms, release`;
    }
    case 'tryAcquire':
      return `A${step.actor}.tryAcquire(${step.abortAfter !== undefined ? `abort after ${step.abortAfter} ms` : ''})${step.look ? ' looks at signal,' : ''} hold ${step.hold} ms, release`;
    case 'runExclusive':
      return `A${step.actor}.runExclusive(${step.timeout !== undefined ? `timeout ${step.timeout}` : 'no timeout'})${step.reenter ? ' re-entering itself' : ''}, ${step.hold} ms inside`;
    case 'wait':
      return `wait ${step.ms} ms`;
    case 'forceDelete':
      return `operator deletes node #${step.which} (mod count) of the scenario`;
    case 'revoke':
      return `requestRevocation on node #${step.which} (mod count)`;
    case 'expire':
      return `session of C${step.client} closed from outside (expired)`;
    case 'stall':
      return `event loop stalled ${step.ms} ms`;
    case 'close':
      return `C${step.client}.close()`;
    case 'reopen':
      return `new client in slot C${step.client}`;
    case 'freeze':
      return `member #${step.member} (mod 3) frozen for ${step.ms} ms`;
    case 'cutFromLeader':
      return `follower #${step.member} (mod 2) cut from the leader for ${step.ms} ms`;
  }
}

/** The scenario, readably: what fast-check's counterexample line would print as JSON. */
export function scenarioText(s: Scenario): string {
  const lines = [
    `family ${s.family}${s.family === 'semaphore' ? ` (N = ${s.permits})` : ''}${s.lockDelay > 0 ? `, lockDelay ${s.lockDelay}` : ''}, ${s.clients} client(s)${s.missingChroot >= 0 ? `, C${s.missingChroot} with a chroot that does not exist` : ''}${s.longSessions ? ', long sessions' : ''}`,
    ...s.actors.map((a, i) => `  ${actorText(a, i)}`),
    ...s.faults.map((f) => `  fault: request #${f.nth} of C${f.client} -> ${verdictText(f.verdict)}`),
    ...s.replyDelays.map((d) => `  fault: reply to request #${d.nth} of C${d.client} -> delay ${d.ms} ms`),
    ...s.steps.map((step, i) => `  ${i + 1}. ${stepText(step)}`),
  ];
  return lines.join('\n');
}
