import type { AcquireOptions, Lease, MultiLease, Stat } from '../src/index.js';
import { LockLostError, MultiLock, Mutex, NonReentrantMutex, ReadWriteLock, Semaphore, SimpleLock, ZooKeeperClient, ZooKeeperError, joinPath, requestRevocation } from '../src/index.js';
import { endSession } from '../src/connection/session/end-session.js';
import { FaultProxy } from '../src/testing/index.js';
import type { ZooKeeperEnsemble } from '../src/testing/index.js';
import type { RequestVerdict } from '../src/testing/request-filter.js';
import type { Actor, Scenario, Step } from './scenario.js';
import { stepText } from './scenario.js';
import { memberFault, runningMember } from './members.js';

/**
 * Runs one scenario against a real server and checks the invariants from outside the locks:
 * an observer client lists the server's nodes, every hand-out is checked against the leases
 * still live (and a fence of tokens per resource), every call against its deadline.
 * Violations are returned, not thrown: the property turns them into a failure fast-check shrinks.
 */

export interface Timing {
  /** The clients' session timeout, ms. */
  readonly sessionTimeout: number;
  /** What a loaded machine may add to any promised bound (late timers, a busy JVM). */
  readonly slack: number;
}

/** What an invariant broke: shrinking keeps to failures of the kind first found. */
export type ViolationKind =
  | 'handed-out-after-close'
  | 'handed-out-lost'
  | 'fence'
  | 'two-holders'
  | 'semaphore-over-admit'
  | 'loss-unsignalled'
  | 'explorer-error'
  | 'untyped-error'
  | 'undocumented-code'
  | 'unexplained-loss'
  | 'close-leaves-nodes'
  | 'never-settles'
  | 'deadline-overrun'
  | 'leak'
  | 'stranded'
  | 'healthy-connection-dropped';

export interface Violation {
  readonly kind: ViolationKind;
  readonly text: string;
}

/** How long a request whose session is being closed from outside is held back (see the `expire` fault): the close takes a round trip. */
const EXPIRE_HOLD_MS = 200;

/** How much longer a scenario's long sessions are. */
const LONG_SESSIONS = 3;

export const DEFAULT_TIMING: Timing = { sessionTimeout: 2000, slack: 1500 };

export type AnyLease = Lease | MultiLease;

/** A resource a lease claims: exclusively, shared, or k of a semaphore's N. */
interface Claim {
  readonly resource: string;
  readonly mode: 'x' | 's' | number;
}

interface Slot {
  client: ZooKeeperClient;
  /** One per server (each member of an ensemble): the client's connect string names them all, the faults count its requests over all. */
  proxies: FaultProxy[];
  /** Requests this slot's clients sent so far (the faults count them). */
  requests: number;
  /** When close() was called on the current client, if it was. */
  closedAt: number | undefined;
  locks: Map<number, Callable>;
  /** Whether the scenario did anything to this slot's connection or session (a request fault, an expiry, a close). */
  faulted: boolean;
  /** State changes of the slot's client so far (a connection lost, a session renewed): an answer after none came on the same connection. */
  changes: number;
}

/** Makes an actor's lock on `path` (its family's path), or undefined for the recipe's own. */
export type LockFactory = (actor: Actor, client: ZooKeeperClient, path: string) => Callable | undefined;

/** What the explorer calls on an actor's lock, whatever its kind. */
export interface Callable {
  acquire(o: AcquireOptions): Promise<AnyLease>;
  tryAcquire(o: { signal?: AbortSignal }): Promise<AnyLease | null>;
  runExclusive(fn: (lease: AnyLease) => Promise<void>, o: AcquireOptions): Promise<void>;
  /** Re-enters from inside the section (the lock itself, or a mutex of a multi-lock's set). */
  inner?: (fn: () => Promise<void>) => Promise<void>;
  rw?: ReadWriteLock;
}

interface Hold {
  readonly label: string;
  lease: AnyLease;
  claims: Claim[];
  readonly nodes: readonly string[];
  readonly session: bigint;
  /** The slot, and the client of it, that the lease was handed out on. */
  readonly slot: Slot;
  readonly client: ZooKeeperClient;
  /** Lost by what the scenario did from outside (node deleted, session closed): its holder hears of it with everyone else. */
  excusedAt: number | undefined;
  ended: boolean;
}

/** Global stalls (the event loop is shared by every scenario running at once): bounds are widened by what overlapped them. */
const stalls: { at: number; ms: number }[] = [];

function stalledSince(since: number): number {
  return stalls.filter((s) => s.at + s.ms >= since).reduce((sum, s) => sum + s.ms, 0);
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Error codes a user of an acquire may be handed (README, Error codes); anything else is a defect. */
const ACQUIRE_CODES = new Set(['LOCK_TIMEOUT', 'ABORTED', 'CLOSED', 'WOULD_DEADLOCK', 'UPGRADE_NOT_SUPPORTED', 'LOCK_LOST', 'DOWNGRADE_CONFLICT', 'NOT_HELD', 'SESSIONEXPIRED', 'CHROOT_MISSING']);

function describeError(error: unknown): string {
  if (error instanceof ZooKeeperError) return `${error.name} ${error.code}: ${error.message}`;
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

function leaseNodes(lease: AnyLease): string[] {
  return 'leases' in lease ? lease.leases.map((l) => l.node) : [lease.node];
}

function leaseSession(lease: AnyLease): bigint {
  return 'leases' in lease ? (lease.leases[0]?.sessionId ?? 0n) : lease.sessionId;
}

/** The fencing token of the lease's node on `resource` (a multi-lease has one per lock). */
function tokenOn(lease: AnyLease, resource: string): bigint {
  const leases = 'leases' in lease ? lease.leases : [lease];
  return (leases.find((l) => l.node.startsWith(`${resource}/`)) ?? leases[0]!).fencingToken;
}

function conflicts(a: Claim, b: Claim): boolean {
  if (a.resource !== b.resource) return false;
  if (typeof a.mode === 'number' || typeof b.mode === 'number') return false;
  return a.mode === 'x' || b.mode === 'x';
}

export class ScenarioRun {
  readonly violations: Violation[] = [];
  readonly log: string[] = [];
  private readonly slots: Slot[] = [];
  private readonly holds: Hold[] = [];
  private readonly pending = new Set<Promise<unknown>>();
  private readonly passwords = new Map<bigint, Buffer>();
  /** Highest fencing token handed out per exclusive resource. */
  private readonly fence = new Map<string, bigint>();
  /** Nodes the operator deleted. */
  private readonly deleted = new Set<string>();
  /**
   * Sessions the scenario expired from outside: every node of theirs is gone or going. Not those it closed: a
   * lease handed out after `close()` was called is a violation of its own (handed-out-after-close), which the
   * client could have known of — no window to excuse.
   */
  private readonly expiredSessions = new Set<bigint>();
  private readonly t0 = performance.now();
  private healed = false;
  private healedAt = 0;
  /** Every call (`due` undefined: one without a deadline, named only if it never settles). */
  private readonly deadlines: { label: string; due: number | undefined; start: number; settled: () => number | undefined }[] = [];

  constructor(
    private readonly scenario: Scenario,
    private readonly root: string,
    private readonly serverPort: number,
    private readonly admin: ZooKeeperClient,
    timing: Timing,
    /** Makes the actors' locks: the recipes by default; the explorer's self-test passes a broken one. */
    private readonly lockFactory?: LockFactory,
    /** The ensemble `serverPort` belongs to, for member faults (`--ensemble`); none: a standalone server. */
    private readonly ensemble?: ZooKeeperEnsemble,
  ) {
    this.timing = scenario.longSessions ? { ...timing, sessionTimeout: LONG_SESSIONS * timing.sessionTimeout } : timing;
  }

  private readonly timing: Timing;

  private now(): number {
    return performance.now() - this.t0;
  }

  private violation(kind: ViolationKind, text: string): void {
    this.violations.push({ kind, text: `[${Math.round(this.now())} ms] ${text}` });
  }

  private note(text: string): void {
    this.log.push(`[${Math.round(this.now())} ms] ${text}`);
  }

  private get path(): string {
    return joinPath(this.root, 'lock');
  }

  // ---- clients ----------------------------------------------------------------------------

  private async openSlot(index: number): Promise<Slot> {
    const existing = this.slots[index];
    const slot: Slot = existing ?? { client: undefined as unknown as ZooKeeperClient, proxies: [], requests: 0, closedAt: undefined, locks: new Map(), faulted: false, changes: 0 };
    if (existing === undefined) {
      const ports = this.ensemble?.members.map((m) => m.port) ?? [this.serverPort];
      slot.proxies = await Promise.all(ports.map((targetPort) => FaultProxy.start({ targetPort, onRequest: () => this.decide(index, slot) })));
      // The connect response carries the session's password: what closing the session from outside needs.
      for (const proxy of slot.proxies) {
        proxy.onChunk((event) => {
          if (event.direction !== 'downstream' || event.forwardedBytes !== event.chunk.length || event.chunk.length < 40) return;
          this.passwords.set(event.chunk.readBigInt64BE(12), Buffer.from(event.chunk.subarray(24, 40)));
        });
      }
    }
    const chroot = this.scenario.missingChroot === index ? `${this.root}-missing-chroot` : '';
    const connectString = slot.proxies.map((proxy) => proxy.connectString).join(',');
    slot.client = await ZooKeeperClient.connect(connectString + chroot, { sessionTimeout: this.timing.sessionTimeout });
    slot.faulted = false;
    slot.client.onState((event) => {
      slot.changes++;
      if (event === 'suspended') this.suspended(index, slot);
    });
    slot.closedAt = undefined;
    slot.locks = new Map();
    this.slots[index] = slot;
    return slot;
  }

  private decide(index: number, slot: Slot): RequestVerdict {
    slot.requests++;
    if (this.healed) return 'forward';
    const fault = this.scenario.faults.find((f) => f.client === index && f.nth === slot.requests);
    const replyDelay = this.scenario.replyDelays.find((d) => d.client === index && d.nth === slot.requests);
    if (fault === undefined && replyDelay !== undefined) {
      this.note(`fault: C${index} reply to request #${slot.requests} -> delay ${replyDelay.ms}`);
      slot.faulted = true;
      return { delayReply: replyDelay.ms };
    }
    if (fault === undefined) return 'forward';
    this.note(`fault: C${index} request #${slot.requests} -> ${typeof fault.verdict === 'string' ? fault.verdict : `delay ${fault.verdict.delay}`}`);
    slot.faulted = true;
    if (fault.verdict === 'expire') {
      // Between two requests of the client: the session ends (its nodes with it) while this one is
      // on its way, held back until the close has run; the server then drops the connection.
      this.track(this.expireSession(index));
      return { delay: EXPIRE_HOLD_MS };
    }
    return fault.verdict;
  }

  /**
   * A connection the scenario did nothing to may be given up only when the event loop stalled
   * for most of its read deadline (2/3 of the session timeout): the README's lease survives a
   * stall of a third of the session timeout, and the client must read what arrived meanwhile.
   */
  private suspended(index: number, slot: Slot): void {
    if (slot.faulted || slot.closedAt !== undefined || this.healed) return;
    const window = this.timing.sessionTimeout;
    const since = performance.now() - window;
    const recent = stalls.filter((s) => s.at + s.ms >= since);
    const total = recent.reduce((sum, s) => sum + s.ms, 0);
    if (recent.length > 0 && total < window / 2) {
      this.violation('healthy-connection-dropped', `C${index} lost a connection the scenario did nothing to, after stalls of ${recent.map((s) => s.ms).join(' + ')} ms (session timeout ${window} ms)`);
    }
  }

  // ---- locks ------------------------------------------------------------------------------

  /** The actor's lock on its slot's current client (one per actor and client, so re-entry is by lock object). */
  private lockOf(actorIndex: number): Callable {
    const actor = this.scenario.actors[actorIndex]!;
    const slot = this.slots[actor.client]!;
    let lock = slot.locks.get(actorIndex);
    if (lock === undefined) {
      lock = this.lockFactory?.(actor, slot.client, this.path) ?? this.makeLock(actor, slot.client);
      slot.locks.set(actorIndex, lock);
    }
    return lock;
  }

  private makeLock(actor: Actor, client: ZooKeeperClient): Callable {
    const { path } = this;
    const options = { revocable: actor.revocable, ...(this.scenario.lockDelay > 0 ? { lockDelay: this.scenario.lockDelay } : {}) };
    const queue = (lock: Pick<Mutex, 'acquire' | 'tryAcquire' | 'runExclusive'>, rw?: ReadWriteLock): Callable => ({
      acquire: (o) => lock.acquire(o),
      tryAcquire: (o) => lock.tryAcquire(o),
      runExclusive: (fn, o) => lock.runExclusive(fn, o),
      inner: (fn) => lock.runExclusive(fn),
      ...(rw ? { rw } : {}),
    });
    switch (actor.kind) {
      case 'Mutex':
        return queue(new Mutex(client, path, options));
      case 'NonReentrantMutex':
        return queue(new NonReentrantMutex(client, path, options));
      case 'ReadLock':
      case 'WriteLock': {
        const rw = new ReadWriteLock(client, path, { revocable: actor.revocable });
        return queue(actor.kind === 'ReadLock' ? rw.readLock : rw.writeLock, rw);
      }
      case 'Semaphore': {
        const sem = new Semaphore(client, path, this.scenario.permits);
        const k = actor.leases;
        return k > 1
          ? { acquire: (o) => sem.acquire({ ...o, leases: k }), tryAcquire: (o) => sem.tryAcquire({ ...o, leases: k }), runExclusive: (fn, o) => sem.runExclusive(fn, o) }
          : { acquire: (o) => sem.acquire(o), tryAcquire: (o) => sem.tryAcquire(o), runExclusive: (fn, o) => sem.runExclusive(fn, o) };
      }
      case 'SimpleLock': {
        const simple = new SimpleLock(client, joinPath(path, 'simple'));
        // No runExclusive of its own: what a user writes instead.
        const runExclusive = async (fn: (lease: AnyLease) => Promise<void>, o: AcquireOptions): Promise<void> => {
          const lease = await simple.acquire(o);
          try {
            await fn(lease);
          } finally {
            await lease.release();
          }
        };
        return { acquire: (o) => simple.acquire(o), tryAcquire: (o) => simple.tryAcquire(o), runExclusive };
      }
      case 'MultiLock': {
        const first = new Mutex(client, joinPath(path, 'a'), options);
        const multi = new MultiLock([first, new Mutex(client, joinPath(path, 'b'), options)]);
        // Re-entry: a mutex of the set, from inside the multi-lock's section.
        return { acquire: (o) => multi.acquire(o), tryAcquire: (o) => multi.tryAcquire(o), runExclusive: (fn, o) => multi.runExclusive(fn, o), inner: (fn) => first.runExclusive(fn) };
      }
      case 'MutexA':
        return queue(new Mutex(client, joinPath(path, 'a'), options));
      case 'MutexB':
        return queue(new Mutex(client, joinPath(path, 'b'), options));
    }
  }

  /** `single`: a semaphore's runExclusive takes one lease, whatever the actor's k. */
  private claimsOf(actorIndex: number, read = false, single = false): Claim[] {
    const actor = this.scenario.actors[actorIndex]!;
    const p = this.path;
    switch (actor.kind) {
      case 'ReadLock':
        return [{ resource: p, mode: 's' }];
      case 'WriteLock':
        return [{ resource: p, mode: read ? 's' : 'x' }];
      case 'Semaphore':
        return [{ resource: p, mode: single ? 1 : actor.leases }];
      case 'MultiLock':
        return [
          { resource: `${p}/a`, mode: 'x' },
          { resource: `${p}/b`, mode: 'x' },
        ];
      case 'MutexA':
        return [{ resource: `${p}/a`, mode: 'x' }];
      case 'MutexB':
        return [{ resource: `${p}/b`, mode: 'x' }];
      default:
        return [{ resource: p, mode: 'x' }];
    }
  }

  // ---- invariants at hand-out -----------------------------------------------------------------

  private handOut(label: string, actorIndex: number, lease: AnyLease, slot: Slot, look: boolean, excusedBefore: boolean, read = false): Hold {
    const nodes = leaseNodes(lease);
    // A node the operator deleted, or a session the scenario expired, before its acquire resolved: lost from
    // outside, like a holder's (`excuse` marks only the holds that already exist). An acquire whose create the
    // server answered just before it closed the session hands out a lease whose client has not yet read the
    // news: the README's window of a round trip ("news on its way"), after which its signal must abort — the
    // grace check, not two-holders, judges it (seed 56244 path 1: a writer handed out 5 ms after its session was
    // expired, a reader of another session 22 ms later, the writer's SESSIONEXPIRED read 25 ms after that).
    const session = leaseSession(lease);
    const excusedAt = nodes.some((n) => this.deleted.has(n)) || this.expiredSessions.has(session) ? performance.now() : undefined;
    const hold: Hold = { label, lease, claims: this.claimsOf(actorIndex, read, !('leases' in lease)), nodes, session, slot, client: slot.client, excusedAt, ended: false };
    if (slot.closedAt !== undefined) this.violation('handed-out-after-close', `${label}: a lease was handed out after its client's close() was called (${Math.round(performance.now() - slot.closedAt)} ms before)`);
    if (look && !excusedBefore && lease.signal.aborted) this.violation('handed-out-lost', `${label}: the lease was handed out already lost (${describeError(lease.signal.reason)})`);
    if (hold.excusedAt !== undefined) {
      // Its node went from outside before the hand-out, with no news of that read yet (the listing
      // that made it the holder came first): the README's window of a round trip, in which the
      // next contender may already hold legitimately. The lost lease is what must give way, within
      // the grace (its signal aborted); the live holder it meets is no second holder, and its lower
      // token is no fence violation (seed 2030 path 8:21:13: a holder's node deleted as its
      // acquire ended, the waiter behind it handed out first).
      this.graceCheck(hold, `${label} handed out on a node deleted from outside`);
    } else {
      // Live holders that conflict with this one.
      for (const other of this.holds) {
        if (other.ended) continue;
        const overlap = hold.claims.some((c) => other.claims.some((o) => conflicts(c, o)));
        if (!overlap) continue;
        this.checkStillClaims(other, `${label} handed out`);
      }
      this.checkSemaphore(hold, label);
    }
    // The fence: an exclusive hand-out never carries a token lower than one handed out before on that resource.
    for (const claim of hold.claims) {
      if (claim.mode !== 'x' || hold.excusedAt !== undefined) continue;
      const token = tokenOn(lease, claim.resource);
      const highest = this.fence.get(claim.resource) ?? 0n;
      if (token < highest) this.violation('fence', `${label}: fencing token ${token} on ${claim.resource} is lower than ${highest} handed out before`);
      else this.fence.set(claim.resource, token);
    }
    this.holds.push(hold);
    this.note(`${label}: handed out ${hold.nodes.join(', ')}`);
    this.observe(hold);
    return hold;
  }

  /** `other` conflicts with a new hand-out: it must have stopped claiming (its signal aborted), or have been lost from outside (then within a grace). */
  private checkStillClaims(other: Hold, what: string): void {
    if (other.excusedAt !== undefined) {
      this.graceCheck(other, `${what} while ${other.label}'s lock was taken from outside`);
      return;
    }
    if (!other.lease.signal.aborted) this.violation('two-holders', `${what} while ${other.label} still holds ${other.nodes.join(', ')} with a live signal: two conflicting holders`);
  }

  private checkSemaphore(hold: Hold, label: string): void {
    const n = this.scenario.permits;
    for (const claim of hold.claims) {
      if (typeof claim.mode !== 'number') continue;
      const others = this.holds.filter((h) => !h.ended && h.claims.some((c) => typeof c.mode === 'number' && c.resource === claim.resource));
      const live = others.filter((h) => h.excusedAt === undefined && !h.lease.signal.aborted);
      const count = live.reduce((sum, h) => sum + h.claims.reduce((s, c) => s + (typeof c.mode === 'number' ? c.mode : 0), 0), 0) + claim.mode;
      if (count > n) this.violation('semaphore-over-admit', `${label}: ${count} semaphore leases live at once, N = ${n} (${live.map((h) => h.label).join(', ')})`);
      for (const h of others) if (h.excusedAt !== undefined) this.graceCheck(h, `${label} handed out`);
    }
  }

  /** A holder lost from outside hears of it with everyone else: within a round trip or so, its signal must say so. */
  private graceCheck(hold: Hold, what: string): void {
    const since = performance.now();
    const grace = 1000 + this.timing.slack;
    const check = sleep(grace).then(() => {
      if (hold.ended) return;
      const late = grace + stalledSince(since);
      if (!hold.lease.signal.aborted) this.violation('loss-unsignalled', `${what}: ${hold.label}'s signal still not aborted ${Math.round(late)} ms later (held ${String((hold.lease as Lease).held)})`);
    });
    this.track(check);
  }

  /**
   * A holder whose node the operator deleted: once its client has answers to requests sent after
   * the delete, on the connection it had then, its signal must say the lease is lost. The
   * server sends the watch's event before any later reply of the session, and the lease watches its
   * node from its hand-out (README: the signal aborts "as soon as the client hears"), so this needs
   * no grace, whatever the load: a lease that does not watch (or drops the event) is caught here,
   * where the grace check misses it when its hold ends first.
   */
  private heardCheck(hold: Hold, node: string): void {
    const { slot, client } = hold;
    const { changes } = slot;
    const check = (async () => {
      try {
        // Two round trips: a data change just before the delete (a revocation request) used up the
        // one-shot watch, and its re-arming read may leave after the first request (its event was
        // read after that was sent); it is answered, NONODE, before the second.
        await client.sync('/');
        await client.sync('/');
      } catch {
        return;
      }
      if (hold.ended || slot.client !== client || slot.changes !== changes) return;
      if (!hold.lease.signal.aborted) this.violation('loss-unsignalled', `${hold.label}: its client had the answers to two requests sent one after the other after the operator deleted ${node}, on the same connection, and its signal is still live`);
    })();
    this.track(check);
  }

  /** The observer: the lease's nodes must exist, owned by its session; else its signal must abort within a grace. */
  private observe(hold: Hold): void {
    const check = (async () => {
      for (const node of hold.nodes) {
        let stat: Stat | null;
        try {
          // A member behind the leader may not have the node yet (the observer's is not the holder's).
          if (this.ensemble) await this.admin.sync(node);
          stat = await this.admin.exists(node);
        } catch {
          return;
        }
        if (hold.ended || hold.excusedAt !== undefined) return;
        if (stat === null || stat.ephemeralOwner !== hold.session) {
          if (this.deleted.has(node)) return;
          this.note(`${hold.label}: observer finds ${node} ${stat === null ? 'gone' : `owned by 0x${stat.ephemeralOwner.toString(16)}`}`);
          hold.excusedAt = performance.now();
          this.graceCheck(hold, `${hold.label} holds ${node}, which the server ${stat === null ? 'does not have' : 'gives to another session'}`);
          return;
        }
      }
    })();
    this.track(check);
  }

  // ---- calls ------------------------------------------------------------------------------

  private track(promise: Promise<unknown>): void {
    const p = promise.catch((error: unknown) => this.violation('explorer-error', `explorer error: ${describeError(error)}`));
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
  }

  /** A call with a deadline (`timeout` or its abort) must settle by then plus the README's bound (min(1 s, timeout/4)) plus slack; one without (`ms` undefined) is recorded to be named if it never settles. */
  private deadline(label: string, start: number, ms: number | undefined, settled: () => number | undefined): void {
    this.deadlines.push({ label, due: ms === undefined ? undefined : start + ms, start, settled });
  }

  private rejection(label: string, error: unknown, allowed = ACQUIRE_CODES): void {
    if (!(error instanceof ZooKeeperError)) {
      this.violation('untyped-error', `${label} rejected with an untyped error: ${describeError(error)}`);
      return;
    }
    if (!allowed.has(error.code)) this.violation('undocumented-code', `${label} rejected with ${describeError(error)}, not a code the README documents for it`);
    else this.note(`${label} rejected: ${error.code}`);
  }

  private async holdFor(hold: Hold, ms: number, step: Step, actorIndex: number, slot: Slot): Promise<void> {
    if (step.op === 'acquire' && step.downgradeAfter !== undefined && this.scenario.actors[actorIndex]!.kind === 'WriteLock' && 'node' in hold.lease) {
      await sleep(Math.min(step.downgradeAfter, ms));
      const { rw } = this.lockOf(actorIndex);
      try {
        const read = await rw!.downgrade(hold.lease);
        // The write lease is over; the read lease claims the lock shared from now.
        hold.ended = true;
        hold.lease = read;
        const readHold = this.handOut(`${hold.label} (downgraded)`, actorIndex, read, slot, false, true, true);
        await sleep(Math.max(0, ms - step.downgradeAfter));
        await this.release(readHold);
      } catch (error) {
        this.rejection(`${hold.label} downgrade`, error, new Set(['DOWNGRADE_CONFLICT', 'NOT_HELD', 'CLOSED', 'SESSIONEXPIRED', 'CONNECTIONLOSS']));
        await sleep(Math.max(0, ms - step.downgradeAfter));
        await this.release(hold);
      }
      return;
    }
    await sleep(ms);
    await this.release(hold);
  }

  private async release(hold: Hold): Promise<void> {
    if (hold.ended) return;
    const { signal } = hold.lease;
    // A loss with nobody deleting the node nor ending the session is a lock taken by one of its own.
    if (signal.aborted && signal.reason instanceof LockLostError && signal.reason.reason === 'NODE_DELETED' && hold.excusedAt === undefined && !hold.nodes.some((n) => this.deleted.has(n))) {
      this.violation('unexplained-loss', `${hold.label}: lost with NODE_DELETED, yet nobody deleted ${hold.nodes.join(', ')}`);
    }
    hold.ended = true;
    try {
      await hold.lease.release();
    } catch (error) {
      if (!(error instanceof ZooKeeperError) && !(error instanceof AggregateError)) this.violation('untyped-error', `${hold.label} release threw an untyped error: ${describeError(error)}`);
    }
  }

  private startCall(step: Step, index: number): void {
    if (step.op !== 'acquire' && step.op !== 'tryAcquire' && step.op !== 'runExclusive') return;
    const label = `step ${index + 1} (A${step.actor}.${step.op})`;
    const slot = this.slots[this.scenario.actors[step.actor]!.client]!;
    const start = performance.now();
    const excusedCount = this.excusals;
    let settledAt: number | undefined;
    const settle = (): void => {
      settledAt = performance.now();
    };
    const controller = new AbortController();
    const abortAfter = 'abortAfter' in step ? step.abortAfter : undefined;
    if (abortAfter !== undefined) setTimeout(() => controller.abort(), abortAfter).unref();
    const timeout = 'timeout' in step ? step.timeout : undefined;
    const bound = [timeout, abortAfter].filter((x) => x !== undefined).reduce<number | undefined>((a, b) => (a === undefined ? b : Math.min(a, b)), undefined);
    this.deadline(label, start, bound, () => settledAt);
    const calls = this.lockOf(step.actor);
    const signalOpt = abortAfter !== undefined ? { signal: controller.signal } : {};
    const call = (async () => {
      if (step.op === 'runExclusive') {
        try {
          await calls.runExclusive(
            async (lease) => {
              settle();
              const hold = this.handOut(label, step.actor, lease, slot, false, this.excusals !== excusedCount);
              if (step.reenter && calls.inner) {
                const reStart = performance.now();
                let reSettled: number | undefined;
                this.deadline(`${label} re-entry`, reStart, 0, () => reSettled);
                try {
                  await calls.inner(async () => {
                    reSettled = performance.now();
                    await sleep(step.hold / 2);
                  });
                } catch (error) {
                  reSettled ??= performance.now();
                  this.rejection(`${label} re-entry`, error);
                }
              }
              await sleep(step.hold);
              hold.ended = true;
            },
            { ...(timeout !== undefined ? { timeout } : {}) },
          );
        } catch (error) {
          settle();
          this.rejection(label, error);
        }
        return;
      }
      let lease: AnyLease | null;
      try {
        lease =
          step.op === 'acquire'
            ? await calls.acquire({ ...(timeout !== undefined ? { timeout } : {}), ...signalOpt, ...(step.maxHold ? { maxHold: step.maxHold.maxHold, ...(step.maxHold.forceReleaseAfter !== undefined ? { forceReleaseAfter: step.maxHold.forceReleaseAfter } : {}) } : {}) })
            : await calls.tryAcquire(signalOpt);
      } catch (error) {
        settle();
        this.rejection(label, error);
        return;
      }
      settle();
      if (lease === null) {
        this.note(`${label}: null (taken)`);
        return;
      }
      const hold = this.handOut(label, step.actor, lease, slot, step.look, this.excusals !== excusedCount);
      await this.holdFor(hold, step.hold, step, step.actor, slot);
    })();
    this.track(call);
  }

  /** Counts outside events that may take a lock from its holder (excuse a lease handed out lost across them). */
  private excusals = 0;

  private excuse(predicate: (hold: Hold) => boolean): void {
    this.excusals++;
    for (const hold of this.holds) if (!hold.ended && hold.excusedAt === undefined && predicate(hold)) hold.excusedAt = performance.now();
  }

  /** Every ephemeral node under the scenario's root, with its owner. */
  private async nodes(): Promise<{ path: string; owner: bigint }[]> {
    const out: { path: string; owner: bigint }[] = [];
    const walk = async (path: string): Promise<void> => {
      let children: string[];
      try {
        children = (await this.admin.getChildren(path)).children.sort();
      } catch (error) {
        if (error instanceof ZooKeeperError && error.code === 'NONODE') return;
        throw error;
      }
      for (const child of children) {
        const p = joinPath(path, child);
        const stat = await this.admin.exists(p);
        if (stat === null) continue;
        if (stat.ephemeralOwner !== 0n) out.push({ path: p, owner: stat.ephemeralOwner });
        else await walk(p);
      }
    };
    await walk(this.root);
    return out;
  }

  private async outside(step: Step): Promise<void> {
    switch (step.op) {
      case 'wait':
        await sleep(step.ms);
        return;
      case 'stall': {
        const until = Date.now() + step.ms;
        stalls.push({ at: performance.now(), ms: step.ms });
        while (Date.now() < until) {
          // The event loop is blocked on purpose: a GC pause or a synchronous call.
        }
        return;
      }
      case 'forceDelete':
      case 'revoke': {
        const nodes = await this.nodes();
        if (nodes.length === 0) return;
        const node = nodes[step.which % nodes.length]!.path;
        if (step.op === 'revoke') {
          this.note(`revoke ${node}`);
          await requestRevocation(this.admin, node).catch(() => false);
          return;
        }
        this.note(`operator deletes ${node}`);
        this.deleted.add(node);
        const holders = this.holds.filter((h) => !h.ended && h.nodes.includes(node));
        this.excuse((h) => h.nodes.includes(node));
        if (await this.admin.delete(node).then(() => true, () => false)) for (const hold of holders) this.heardCheck(hold, node);
        return;
      }
      case 'expire':
        await this.expireSession(step.client);
        return;
      case 'close': {
        const slot = this.slots[step.client]!;
        if (slot.closedAt !== undefined) return;
        slot.closedAt = performance.now();
        slot.faulted = true;
        const session = slot.client.sessionId;
        this.excuse((h) => h.session === session);
        this.note(`close C${step.client} (session 0x${session.toString(16)})`);
        const closing = slot.client.close();
        this.track(this.closedCheck(closing, session, `C${step.client}.close()`));
        return;
      }
      case 'reopen': {
        const slot = this.slots[step.client]!;
        if (slot.closedAt === undefined) return;
        await this.openSlot(step.client);
        return;
      }
      case 'freeze':
      case 'cutFromLeader': {
        if (!this.ensemble) return;
        // Every client may lose its connection to it: none of them is a healthy connection dropped.
        for (const slot of this.slots) slot.faulted = true;
        // One at a time: the next begins once the one before healed (a member frozen twice, or two of three, is not a fault the harness deals).
        const ensemble = this.ensemble;
        this.memberFaults = this.memberFaults.then(() => memberFault(ensemble, step, (text) => this.note(text))).catch((error: unknown) => this.violation('explorer-error', `member fault: ${describeError(error)}`));
        return;
      }
      default:
        return;
    }
  }

  /** Member faults under way, one after the other: healed (a quorum again) before the scenario's faults heal. */
  private memberFaults: Promise<void> = Promise.resolve();

  /** The slot's session is closed from outside (its id and password over another connection): the server deletes its nodes. */
  private async expireSession(index: number): Promise<void> {
    const slot = this.slots[index]!;
    const session = slot.client.sessionId;
    const password = this.passwords.get(session);
    if (session === 0n || password === undefined) return;
    this.note(`expire C${index}'s session 0x${session.toString(16)}`);
    slot.faulted = true;
    this.expiredSessions.add(session);
    this.excuse((h) => h.session === session);
    const port = this.ensemble ? runningMember(this.ensemble).port : this.serverPort;
    await endSession({ host: '127.0.0.1', port }, { id: session, password, lastZxid: 0n, timeout: this.timing.sessionTimeout }, { tls: undefined, maxReplyBytes: 1 << 20, timeoutMs: 5000 });
  }

  /** Once close() resolved, none of that session's nodes may be left (the README: they go at once). */
  private async closedCheck(closing: Promise<void>, session: bigint, what: string): Promise<void> {
    await closing.catch(() => undefined);
    const resolved = performance.now();
    const grace = 500 + this.timing.slack;
    for (;;) {
      const left = (await this.nodes()).filter((n) => n.owner === session);
      if (left.length === 0) return;
      if (performance.now() - resolved > grace + stalledSince(resolved)) {
        this.violation('close-leaves-nodes', `${what} resolved, yet ${left.map((n) => n.path).join(', ')} of its session still exist ${Math.round(performance.now() - resolved)} ms later`);
        return;
      }
      await sleep(100);
    }
  }

  // ---- the run ------------------------------------------------------------------------------

  async run(): Promise<void> {
    await this.admin.ensurePath(this.root);
    for (let i = 0; i < this.scenario.clients; i++) await this.openSlot(i);
    try {
      for (const [i, step] of this.scenario.steps.entries()) {
        this.note(`${i + 1}. ${stepText(step)}`);
        this.startCall(step, i);
        await this.outside(step);
        // Let the call send its first requests before the next step.
        await sleep(5);
      }
      // Faults heal: from now on every request is forwarded, and every member serves.
      await this.memberFaults;
      this.healed = true;
      this.healedAt = performance.now();
      for (const slot of this.slots) for (const proxy of slot.proxies) proxy.passThrough();
      await this.settle();
      this.checkDeadlines();
      await this.checkLeaks();
      await this.freshAcquire();
    } finally {
      await this.closeAll();
    }
  }

  /** Every call must settle once the faults healed: those without a deadline too. */
  private async settle(): Promise<void> {
    const bound = 3 * this.timing.sessionTimeout + 4 * this.timing.slack;
    const all = Promise.all([...this.pending]);
    for (;;) {
      const done = await Promise.race([all.then(() => true), sleep(bound).then(() => false)]);
      if (done && this.pending.size === 0) return;
      if (!done) {
        if (performance.now() - this.healedAt - stalledSince(this.healedAt) > bound) {
          this.violation('never-settles', `${this.pending.size} call(s) still pending ${Math.round(performance.now() - this.healedAt)} ms after the faults healed (${this.unsettled().join('; ')})`);
          return;
        }
      }
      await sleep(0);
      if (this.pending.size === 0) return;
    }
  }

  private unsettled(): string[] {
    return this.deadlines.filter((d) => d.settled() === undefined).map((d) => d.label);
  }

  private checkDeadlines(): void {
    const bound = Math.min(1000, this.timing.sessionTimeout / 4) + this.timing.slack;
    for (const d of this.deadlines) {
      const settled = d.settled();
      if (settled === undefined || d.due === undefined) continue;
      const late = settled - d.due - stalledSince(d.start);
      if (late > bound) this.violation('deadline-overrun', `${d.label} settled ${Math.round(settled - d.due)} ms after its deadline (bound ${Math.round(bound)} ms)`);
    }
  }

  /** With every call settled and every lease released, no node of a live session of ours may be left. */
  private async checkLeaks(): Promise<void> {
    const started = performance.now();
    const grace = 1000 + this.timing.slack;
    for (;;) {
      const live = new Set(this.slots.filter((s) => s.closedAt === undefined && !s.client.closing).map((s) => s.client.sessionId));
      const leaked = (await this.nodes()).filter((n) => live.has(n.owner));
      if (leaked.length === 0) return;
      if (performance.now() - started > grace + stalledSince(started)) {
        this.violation('leak', `leak: ${leaked.map((n) => `${n.path} (session 0x${n.owner.toString(16)})`).join(', ')} left with every call settled and every lease released`);
        return;
      }
      await sleep(100);
    }
  }

  /** After the faults healed, a fresh client takes the whole lock: nothing stranded it. */
  private async freshAcquire(): Promise<void> {
    const client = await ZooKeeperClient.connect(this.ensemble?.connectString ?? `127.0.0.1:${this.serverPort}`, { sessionTimeout: this.timing.sessionTimeout });
    const timeout = 2 * this.timing.sessionTimeout + 2 * this.timing.slack;
    try {
      const p = this.path;
      const lock =
        this.scenario.family === 'rw'
          ? new ReadWriteLock(client, p).writeLock
          : this.scenario.family === 'semaphore'
            ? null
            : this.scenario.family === 'simple'
              ? new SimpleLock(client, joinPath(p, 'simple'))
              : this.scenario.family === 'multi'
                ? new MultiLock([new Mutex(client, joinPath(p, 'a')), new Mutex(client, joinPath(p, 'b'))])
                : new Mutex(client, p, { lockDelay: this.scenario.lockDelay > 0 ? this.scenario.lockDelay : undefined });
      const lease = lock === null ? await new Semaphore(client, p, this.scenario.permits).acquire({ timeout, leases: this.scenario.permits }) : await lock.acquire({ timeout });
      await lease.release();
    } catch (error) {
      const left = (await this.nodes()).map((n) => `${n.path} (0x${n.owner.toString(16)})`);
      this.violation('stranded', `after the faults healed a fresh acquire failed: ${describeError(error)}; nodes: ${left.join(', ') || 'none'}`);
    } finally {
      await client.close();
    }
  }

  private async closeAll(): Promise<void> {
    for (const [i, slot] of this.slots.entries()) {
      if (slot.closedAt === undefined) {
        slot.closedAt = performance.now();
        const session = slot.client.sessionId;
        await this.closedCheck(slot.client.close(), session, `C${i}.close() at the end`);
      }
    }
    await Promise.all([...this.pending]);
    for (const slot of this.slots) for (const proxy of slot.proxies) await proxy.close();
    await this.admin.delete(this.root).catch(() => undefined);
  }
}

