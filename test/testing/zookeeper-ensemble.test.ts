import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { isHarnessError, isProcessAlive, ZooKeeperEnsemble } from '../../src/testing/index.js';
import type { EnsembleMember } from '../../src/testing/index.js';
import { assertNoJvmLeftBehind } from './helpers/processes.js';
import { ZooKeeperClient } from '../../src/index.js';
import { harnessBound } from '../support/bounds.js';

async function modes(members: readonly EnsembleMember[]): Promise<string[]> {
  return Promise.all(members.map(async (member) => (await member.status())?.mode ?? 'not serving'));
}

// One ensemble for the whole file; the tests run in order and each leaves it serving with all members up.
// Each suite's bound counts its starts and stops (an ensemble's members start in parallel) and its
// waits for a quorum or a leader, which the harness bounds by its start timeout too.
describe('ZooKeeperEnsemble of 3', { timeout: harnessBound(16, 6) }, () => {
  const ensemble = new ZooKeeperEnsemble({ size: 3 });

  after(async () => {
    await ensemble.close();
  });

  it('starts three members with exactly one leader', async (t) => {
    const started = performance.now();
    await ensemble.start();
    t.diagnostic(`ensemble start: ${(performance.now() - started).toFixed(0)} ms`);
    assert.equal(ensemble.members.length, 3);
    assert.deepEqual(
      ensemble.members.map((m) => m.id),
      [1, 2, 3],
    );
    assert.equal(ensemble.connectString, ensemble.members.map((m) => `127.0.0.1:${m.port}`).join(','));
    const roles = await modes(ensemble.members);
    assert.equal(roles.filter((mode) => mode === 'leader').length, 1, roles.join());
    assert.equal(roles.filter((mode) => mode === 'follower').length, 2, roles.join());
    const leader = await ensemble.leader();
    assert.equal(roles[leader.id - 1], 'leader');
    for (const member of ensemble.members) {
      const dir = member.directory;
      assert.equal(readFileSync(join(dir, 'data', 'myid'), 'utf8').trim(), String(member.id));
    }
  });

  it('elects a new leader when the leader is killed, and serves again', async (t) => {
    const oldLeader = await ensemble.leader();
    const oldPid = oldLeader.pid;
    assert.ok(oldPid !== undefined);
    const killedAt = performance.now();
    await oldLeader.kill();
    assert.equal(await isProcessAlive(oldPid), false);
    const newLeader = await ensemble.waitForQuorum();
    t.diagnostic(`failover: ${(performance.now() - killedAt).toFixed(0)} ms`);
    assert.notEqual(newLeader.id, oldLeader.id);
    assert.equal((await newLeader.status())?.mode, 'leader');

    const survivor = ensemble.members.find((m) => m !== oldLeader && m !== newLeader);
    assert.ok(survivor !== undefined);
    const client = await ZooKeeperClient.connect(survivor.connectString);
    try {
      assert.notEqual(client.sessionId, 0n);
      await client.create('/after-failover', 'written');
    } finally {
      await client.close();
    }

    await oldLeader.restart();
    assert.equal(oldLeader.state, 'running');
    assert.equal((await oldLeader.status())?.mode, 'follower', 'the old leader rejoins as a follower');
    const rejoined = await ZooKeeperClient.connect(oldLeader.connectString);
    try {
      await rejoined.sync('/');
      assert.equal((await rejoined.getData('/after-failover')).data.toString(), 'written');
    } finally {
      await rejoined.close();
    }
    await ensemble.waitForQuorum();
  });

  it('a paused member goes silent and comes back after resume', async () => {
    const leader = await ensemble.leader();
    const follower = ensemble.members.find((m) => m !== leader);
    assert.ok(follower !== undefined);
    await follower.pause();
    assert.equal(follower.state, 'paused');
    await assert.rejects(follower.fourLetterWord('srvr', { timeoutMs: 500 }), (error) =>
      isHarnessError(error, 'FOUR_LETTER_WORD_TIMEOUT'),
    );
    // The two others still form a quorum.
    assert.equal((await ensemble.waitForQuorum()).id, leader.id);
    await follower.resume();
    const status = await follower.waitUntilServing();
    assert.ok(status.mode === 'follower' || status.mode === 'leader', status.mode);
    await ensemble.waitForQuorum();
  });

  it('a paused leader is replaced, and steps down once resumed', async (t) => {
    const oldLeader = await ensemble.leader();
    await oldLeader.pause();
    const pausedAt = performance.now();
    // The followers only notice a silent (not dead) leader after syncLimit ticks.
    const newLeader = await ensemble.leader();
    t.diagnostic(`new leader after pause: ${(performance.now() - pausedAt).toFixed(0)} ms`);
    assert.notEqual(newLeader.id, oldLeader.id);
    await oldLeader.resume();
    assert.equal((await ensemble.waitForQuorum()).id, newLeader.id);
    assert.equal((await oldLeader.status())?.mode, 'follower');
  });

  it('a stopped member restarts on the same ports and rejoins', async () => {
    const member = ensemble.member(2);
    const { port } = member;
    await member.stop();
    assert.equal(member.state, 'stopped');
    await ensemble.waitForQuorum();
    await member.start();
    assert.equal(member.port, port);
    const roles = await modes(ensemble.members);
    assert.equal(roles.filter((mode) => mode === 'leader').length, 1, roles.join());
    assert.equal(roles.filter((mode) => mode === 'follower').length, 2, roles.join());
  });

  it('waitForQuorum and leader() time out with QUORUM_TIMEOUT when a majority is gone', async () => {
    const [first, second] = ensemble.members;
    assert.ok(first !== undefined && second !== undefined);
    await Promise.all([first.kill(), second.kill()]);
    await assert.rejects(ensemble.waitForQuorum({ timeoutMs: 1_500 }), (error) => {
      assert.ok(isHarnessError(error, 'QUORUM_TIMEOUT'), String(error));
      assert.equal(error.context.modes[1], 'stopped');
      return true;
    });
    await assert.rejects(ensemble.leader({ timeoutMs: 500 }), (error) => isHarnessError(error, 'QUORUM_TIMEOUT'));
    await ensemble.start();
    assert.ok(ensemble.members.every((m) => m.state === 'running'));
  });

  it('close stops every member and removes the directory', async () => {
    const pids = ensemble.members.map((m) => m.pid);
    const dir = ensemble.directory;
    assert.ok(dir !== undefined && existsSync(dir));
    await ensemble.close();
    for (const pid of pids) {
      assert.ok(pid !== undefined);
      assert.equal(await isProcessAlive(pid), false);
    }
    assert.equal(existsSync(dir), false);
    assert.ok(ensemble.members.every((m) => m.state === 'closed'));
  });
});

describe('ZooKeeperEnsemble of 5', { timeout: harnessBound(2, 1) }, () => {
  it('starts five members with one leader and survives losing two', async (t) => {
    const started = performance.now();
    await using ensemble = await ZooKeeperEnsemble.start({ size: 5 });
    t.diagnostic(`5-member ensemble start: ${(performance.now() - started).toFixed(0)} ms`);
    const roles = await modes(ensemble.members);
    assert.equal(roles.filter((mode) => mode === 'leader').length, 1, roles.join());
    const leader = await ensemble.leader();
    const follower = ensemble.members.find((m) => m !== leader);
    assert.ok(follower !== undefined);
    await Promise.all([leader.kill(), follower.kill()]);
    const newLeader = await ensemble.waitForQuorum();
    assert.ok(newLeader !== leader && newLeader !== follower);
  });

  it('rejects sizes other than 3 and 5, and non-positive limits', () => {
    assert.throws(() => new ZooKeeperEnsemble({ size: 4 as 3 }), (error) => isHarnessError(error, 'INVALID_OPTIONS'));
    assert.throws(() => new ZooKeeperEnsemble({ syncLimit: 0 }), (error) => isHarnessError(error, 'INVALID_OPTIONS'));
  });
});

it('leaves no JVM of this test process behind', async () => {
  await assertNoJvmLeftBehind();
});
