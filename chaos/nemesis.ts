import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EnsembleMember, FaultProxy, ZooKeeperEnsemble } from '../src/testing/index.js';
import type { FaultKind, FaultRecord } from './history.js';
import { preciseNow } from './history.js';
import type { Prng } from './prng.js';
import { pollUntil } from './poll-until.js';

/** A worker process as the nemesis sees it: something to pause, and its own proxies to cut. */
export interface WorkerTarget {
  name: string;
  child: ChildProcess;
  /** The worker reaches the ensemble only through these: one per member, or one for a pinned worker. */
  proxies: readonly FaultProxy[];
  /** The member a pinned worker's only proxy leads to; undefined when it may use any member. */
  pinnedTo: number | undefined;
}

export interface NemesisOptions {
  /** Started with `linkProxies: true`, for the faults between members. */
  ensemble: ZooKeeperEnsemble;
  workers: readonly WorkerTarget[];
  /** Dealt from a deck holding each entry once (repeat a kind to make it more frequent), reshuffled when empty. */
  kinds: readonly FaultKind[];
  prng: Prng;
  sessionTimeout: number;
  /** The quiet time before each fault, in session timeouts: drawn between the two. */
  gap: readonly [number, number];
  /** No fault starts after this time (epoch ms). */
  until: number;
  signal: AbortSignal;
  log: (line: string) => void;
  /** Whether a worker process is in the middle of an exclusive operation meant to last `forMs` more (asked by the resource). */
  busyExclusive: (process: string, forMs?: number) => boolean;
}

const QUORUM_TIMEOUT_MS = 30_000;
/** How long a pause waits for its worker to be mid-operation before pausing it anyway. */
const CATCH_HOLDER_MS = 3_000;
/** How long a fault aimed at a follower waits for a worker pinned there to be in a long hold. */
const CATCH_LONG_HOLD_MS = 10_000;

/**
 * Injects one fault at a time, at seeded intervals, until `until`; every fault is healed before
 * the next one starts, so the checker can measure recovery from each on its own.
 */
export async function runNemesis(options: NemesisOptions): Promise<FaultRecord[]> {
  const faults: FaultRecord[] = [];
  const { prng, signal } = options;
  let deck: FaultKind[] = [];
  for (;;) {
    const gap = prng.between(options.gap[0], options.gap[1]) * options.sessionTimeout;
    if (Date.now() + gap >= options.until || signal.aborted) break;
    await sleep(gap, undefined, { signal }).catch(() => undefined);
    if (signal.aborted) break;
    if (deck.length === 0) deck = prng.shuffle(options.kinds);
    const kind = deck.pop() as FaultKind;
    const start = preciseNow();
    const fault: FaultRecord = { kind, target: '?', start, end: start };
    try {
      // A fault that first waits for a holder to aim at starts when it strikes, not when it began waiting.
      fault.target = await inject(kind, options, () => (fault.start = preciseNow()));
    } catch (error) {
      // A harness failure (a member that would not come back) is a finding, not a reason to stop the run.
      fault.error = String(error);
      await healEverything(options).catch(() => undefined);
    }
    fault.end = preciseNow();
    faults.push(fault);
    options.log(`fault ${kind} on ${fault.target}: ${((fault.end - fault.start) / 1000).toFixed(1)} s${fault.error ? ` FAILED: ${fault.error}` : ''}`);
  }
  return faults;
}

/** Injects and heals one fault; returns what it hit. */
async function inject(kind: FaultKind, options: NemesisOptions, strikesNow: () => void): Promise<string> {
  const { ensemble, prng, sessionTimeout } = options;
  switch (kind) {
    case 'kill-member':
    case 'kill-leader': {
      const member = kind === 'kill-leader' ? await leader(ensemble) : prng.pick(ensemble.members);
      await member.kill();
      await sleep(prng.between(500, 3000));
      await member.restart();
      await ensemble.waitForQuorum({ timeoutMs: QUORUM_TIMEOUT_MS });
      return `member ${member.id}`;
    }
    case 'restart-ensemble': {
      await Promise.all(ensemble.members.map((m) => m.kill()));
      await sleep(prng.between(500, 2000));
      await Promise.all(ensemble.members.map((m) => m.restart()));
      await ensemble.waitForQuorum({ timeoutMs: QUORUM_TIMEOUT_MS });
      return 'all members';
    }
    case 'freeze-member': {
      // A long GC pause or a hung host: the JVM stops, its clients' connections stay open. The
      // leader expires their sessions while the frozen member can say nothing for them.
      const { member, role } = await leaderOrFollower(options);
      const caught = await catchPinnedHolder(options, member);
      strikesNow();
      await member.pause();
      await sleep(prng.between(0.5, 2) * sessionTimeout);
      await member.resume();
      await ensemble.waitForQuorum({ timeoutMs: QUORUM_TIMEOUT_MS });
      return `member ${member.id} (${role}${caught})`;
    }
    case 'isolate-leader': {
      const member = await leader(ensemble);
      return await cutOff(options, member, () => ensemble.isolate(member.id), 'leader');
    }
    case 'split-majority': {
      // Any member alone on the minority side (with three members every split is one against two).
      const { member, role } = await leaderOrFollower(options);
      return await cutOff(options, member, () => ensemble.isolate(member.id, { how: prng.next() < 0.25 ? 'reset' : 'blackhole' }), role);
    }
    case 'isolate-follower-from-leader': {
      // The case the lease must survive safely: the follower still answers its clients' pings
      // until it notices the leader is gone, while the leader expires their sessions.
      let follower = pickFollower(options, await leader(ensemble));
      let caught = await catchPinnedHolder(options, follower);
      // Read again after the wait; should the follower have become the leader, cut another (aimed at nobody).
      const head = await leader(ensemble);
      if (follower === head) [follower, caught] = [pickFollower(options, head), '; leadership moved, aimed at nobody'];
      strikesNow();
      return await cutOff(options, follower, () => ensemble.cutLink(follower.id, head.id), `follower, cut from leader ${head.id}${caught}`);
    }
    case 'slow-link': {
      const head = await leader(ensemble);
      const latencyMs = Math.round(prng.between(0.03, 0.3) * sessionTimeout);
      for (const member of ensemble.members) if (member !== head) ensemble.slowLink(head.id, member.id, latencyMs);
      await sleep(prng.between(1, 2) * sessionTimeout);
      ensemble.heal();
      await ensemble.waitForQuorum({ timeoutMs: QUORUM_TIMEOUT_MS });
      return `leader ${head.id}'s links +${latencyMs} ms`;
    }
    case 'pause-worker': {
      // Longer than the session timeout: the server expires the session while the process sleeps.
      // Caught mid-operation, it is the stale holder the fence must stop when it wakes up.
      const worker = prng.pick(options.workers);
      await pollUntil(() => options.busyExclusive(worker.name), CATCH_HOLDER_MS);
      strikesNow();
      worker.child.kill('SIGSTOP');
      await sleep(prng.between(1.5, 2) * sessionTimeout);
      worker.child.kill('SIGCONT');
      return worker.name;
    }
    case 'cut-worker': {
      const worker = prng.pick(options.workers);
      for (const proxy of worker.proxies) proxy.resetAll();
      return worker.name;
    }
    case 'blackhole-worker':
    case 'expire-session': {
      // A short black hole the session survives, or one long enough that the server expires it
      // (ZooKeeper has no command to expire a session, and the client keeps its password private).
      const worker = prng.pick(options.workers);
      const factor = kind === 'expire-session' ? prng.between(1.5, 2) : prng.between(0.3, 0.5);
      for (const proxy of worker.proxies) proxy.blackhole();
      await sleep(factor * sessionTimeout);
      // Bytes were dropped mid-stream: reset, so the client reconnects on a clean connection.
      for (const proxy of worker.proxies) {
        proxy.passThrough();
        proxy.resetAll();
      }
      return worker.name;
    }
  }
}

/**
 * Holds a cut between members for 1–2 session timeouts (long enough for the leader to expire
 * the sessions a cut-off follower keeps answering), heals, and waits for the quorum.
 */
async function cutOff(options: NemesisOptions, member: EnsembleMember, cut: () => void, role: string): Promise<string> {
  cut();
  await sleep(options.prng.between(1, 2) * options.sessionTimeout);
  options.ensemble.heal();
  await options.ensemble.waitForQuorum({ timeoutMs: QUORUM_TIMEOUT_MS });
  return `member ${member.id} (${role})`;
}

async function leader(ensemble: ZooKeeperEnsemble): Promise<EnsembleMember> {
  return ensemble.leader({ timeoutMs: QUORUM_TIMEOUT_MS });
}

async function leaderOrFollower(options: NemesisOptions): Promise<{ member: EnsembleMember; role: string }> {
  const head = await leader(options.ensemble);
  return options.prng.next() < 0.5 ? { member: head, role: 'leader' } : { member: pickFollower(options, head), role: 'follower' };
}

/** A follower, preferring one that pinned workers hold sessions on: the faults there are the ones aimed at them. */
function pickFollower(options: NemesisOptions, head: EnsembleMember): EnsembleMember {
  const followers = options.ensemble.members.filter((member) => member !== head);
  const withPinned = followers.filter((member) => options.workers.some((worker) => worker.pinnedTo === member.id));
  return options.prng.pick(withPinned.length > 0 ? withPinned : followers);
}

/**
 * Waits (bounded) until a worker pinned to `member` is in an exclusive hold with at least half a
 * session timeout to go (a lease is given up about a third of one after its last proof), so the
 * fault takes a lease from a holder in the middle of its work: the case the lost-lease check is
 * about. Short holds end before any lease could be lost. Returns a note for the fault's target.
 */
async function catchPinnedHolder(options: NemesisOptions, member: EnsembleMember): Promise<string> {
  const pinned = options.workers.filter((worker) => worker.pinnedTo === member.id);
  if (pinned.length === 0) return '';
  const holding = (): WorkerTarget | undefined => pinned.find((worker) => options.busyExclusive(worker.name, options.sessionTimeout / 2));
  await pollUntil(() => holding() !== undefined, CATCH_LONG_HOLD_MS);
  const caught = holding();
  return caught === undefined ? '; no pinned holder caught' : `; ${caught.name} caught mid-hold`;
}

/** After a fault that failed halfway: links healed and nothing left frozen, so the next fault starts clean. */
async function healEverything(options: NemesisOptions): Promise<void> {
  options.ensemble.heal();
  for (const member of options.ensemble.members) if (member.state === 'paused') await member.resume();
  await options.ensemble.waitForQuorum({ timeoutMs: QUORUM_TIMEOUT_MS });
}
