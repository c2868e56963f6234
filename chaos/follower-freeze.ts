/**
 * One trial of the lease's promise through a follower: a holder connected only to a follower,
 * the follower frozen (SIGSTOP: a GC pause or a hung host) while its client stays connected, and
 * a contender on the leader that gets the lock once the leader expires the holder's session.
 * The holder's signal must abort before the contender acquires; the margin is the time between.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Mutex, ZooKeeperClient } from '../src/index.js';
import type { EnsembleMember, ZooKeeperEnsemble } from '../src/testing/index.js';

export interface TrialOptions {
  /** The holder's requested session timeout (ms). */
  sessionTimeout: number;
  /** How long after the holder acquires to freeze its follower (ms): varies the freeze's phase against pings and heartbeats. */
  freezeAfter: number;
  lockPath: string;
}

export interface TrialResult {
  /** contender acquired − holder's signal aborted (ms); negative: two holders at once. */
  marginMs: number;
  /** holder's signal aborted − follower frozen (ms). */
  signalAfterFreezeMs: number;
  /** contender acquired − follower frozen (ms). */
  acquiredAfterFreezeMs: number;
  /** Why the holder's signal aborted. */
  reason: string;
  negotiatedTimeout: number;
}

/** Runs one trial; leaves the ensemble whole (the follower thawed and back in the quorum). */
export async function followerFreezeTrial(ensemble: ZooKeeperEnsemble, options: TrialOptions): Promise<TrialResult> {
  const leader = await ensemble.leader();
  const follower: EnsembleMember = ensemble.members.find((m) => m !== leader && m.state === 'running')!;
  // Pinned: one member in the connect string, so the holder stays with its follower.
  const holderClient = await ZooKeeperClient.connect(follower.connectString, { sessionTimeout: options.sessionTimeout });
  const contenderClient = await ZooKeeperClient.connect(leader.connectString, { sessionTimeout: options.sessionTimeout });
  let frozen = false;
  try {
    const lease = await new Mutex(holderClient, options.lockPath).acquire({ timeout: 10 * options.sessionTimeout });
    let signalAt = NaN;
    let reason = '';
    const aborted = new Promise<void>((resolve) =>
      lease.signal.addEventListener('abort', () => {
        signalAt = performance.now();
        reason = (lease.signal.reason as { reason?: string }).reason ?? String(lease.signal.reason);
        resolve();
      }),
    );
    const contending = new Mutex(contenderClient, options.lockPath).acquire({ timeout: 20 * options.sessionTimeout });
    await sleep(options.freezeAfter);
    await follower.pause();
    frozen = true;
    const frozenAt = performance.now();
    const contender = await contending;
    const acquiredAt = performance.now();
    await contender.release();
    // A signal that comes after the other acquire (a violation) is still measured, for the report.
    await Promise.race([aborted, sleep(2 * options.sessionTimeout)]);
    return {
      marginMs: acquiredAt - signalAt,
      signalAfterFreezeMs: signalAt - frozenAt,
      acquiredAfterFreezeMs: acquiredAt - frozenAt,
      reason,
      negotiatedTimeout: holderClient.sessionTimeout,
    };
  } finally {
    if (frozen) await follower.resume();
    await Promise.all([holderClient.close(), contenderClient.close()]);
    await ensemble.waitForQuorum();
    await follower.waitUntilServing();
  }
}
