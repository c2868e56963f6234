import type { ZooKeeperEnsemble } from '../src/testing/index.js';
import type { Step } from './scenario.js';

/**
 * The member faults of an ensemble scenario (`--ensemble`), as the chaos suite deals them
 * (chaos/nemesis.ts: freeze-member, isolate-follower-from-leader), but short and decided by the
 * scenario's seed: a member frozen (SIGSTOP, its sockets open: its clients hear nothing while
 * the leader expires their sessions), or a follower cut from the leader (it answers its clients
 * until it notices). Each heals after `ms`; the ensemble has a quorum again before the promise
 * resolves, so the scenario's "faults healed" means the members' too.
 */

/** Quorum after a heal: an election takes a few seconds on a loaded machine. */
const QUORUM_TIMEOUT_MS = 30_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export type MemberFault = Extract<Step, { op: 'freeze' | 'cutFromLeader' }>;

/** Deals `fault`, heals it after its `ms`; `note` hears what was hit. */
export async function memberFault(ensemble: ZooKeeperEnsemble, fault: MemberFault, note: (text: string) => void): Promise<void> {
  const leader = await ensemble.leader({ timeoutMs: QUORUM_TIMEOUT_MS });
  if (fault.op === 'freeze') {
    const member = ensemble.members[fault.member % ensemble.members.length]!;
    note(`member ${member.id}${member === leader ? ' (leader)' : ''} frozen for ${fault.ms} ms`);
    await member.pause();
    try {
      await sleep(fault.ms);
    } finally {
      await member.resume();
    }
  } else {
    const followers = ensemble.members.filter((m) => m !== leader);
    const follower = followers[fault.member % followers.length]!;
    note(`follower ${follower.id} cut from leader ${leader.id} for ${fault.ms} ms`);
    ensemble.cutLink(follower.id, leader.id);
    try {
      await sleep(fault.ms);
    } finally {
      ensemble.heal();
    }
  }
  await ensemble.waitForQuorum({ timeoutMs: QUORUM_TIMEOUT_MS });
  note(`members healed`);
}

/** A member that is not frozen, to send the scenario's own requests to (closing a session from outside). */
export function runningMember(ensemble: ZooKeeperEnsemble): { port: number } {
  return ensemble.members.find((m) => m.state === 'running') ?? ensemble.members[0]!;
}
