import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import { Mutex, ZooKeeperClient, parseEnsembleConfig } from '../../src/index.js';
import type { Lease } from '../../src/index.js';
import { ZooKeeperEnsemble, isHarnessError } from '../../src/testing/index.js';
import type { EnsembleMember } from '../../src/testing/index.js';
import { ROUND_TRIPS_MS, WAITER_TIMEOUT_MS, harnessBound, sessionBound } from '../support/bounds.js';
import { eventually } from '../support/wait.js';

/** Long enough that a loaded machine's leader change (the old leader leaves with the second reconfig) does not expire a session. */
const SESSION_MS = 20_000;

/** The members whose `cons` lists a connection of this session: where the server side says the client is. */
async function serversOf(session: bigint, members: readonly EnsembleMember[]): Promise<number[]> {
  const sid = `sid=0x${session.toString(16)}`;
  const holders = await Promise.all(members.map(async (m) => ((await m.fourLetterWord('cons')).includes(sid) ? [m.id] : [])));
  return holders.flat();
}

describe('reconfigurable ensembles: options', () => {
  it('refuse what cannot work, before starting anything (INVALID_OPTIONS, INVALID_STATE)', async () => {
    assert.throws(() => new ZooKeeperEnsemble({ reconfigEnabled: true, linkProxies: true }), (e) => isHarnessError(e, 'INVALID_OPTIONS'));
    assert.throws(() => new ZooKeeperEnsemble({ reconfigEnabled: true, tls: true }), (e) => isHarnessError(e, 'INVALID_OPTIONS'));
    await assert.rejects(new ZooKeeperEnsemble().reconfig({ add: [4] }), (e) => isHarnessError(e, 'INVALID_OPTIONS'));
    await assert.rejects(new ZooKeeperEnsemble().addMember(), (e) => isHarnessError(e, 'INVALID_OPTIONS'));
    await assert.rejects(new ZooKeeperEnsemble({ reconfigEnabled: true }).addMember(), (e) => isHarnessError(e, 'INVALID_STATE'));
  });
});

describe('reconfiguration of a real ensemble (reconfigEnabled): 3 members, 2 added, the 3 first removed', () => {
  let ensemble: ZooKeeperEnsemble;

  before(async () => {
    ensemble = await ZooKeeperEnsemble.start({ size: 3, reconfigEnabled: true, tickTime: 200 });
  });
  after(async () => {
    await ensemble?.close();
  });

  it('locks held and waited on by followConfig clients survive it: same sessions and nodes, every client on a new member, the waiters get in; a client without followConfig moves with updateServerAddresses', async (t) => {
    const original = ensemble.connectString;
    await assert.rejects(ensemble.reconfig({}), (e) => isHarnessError(e, 'INVALID_OPTIONS'));
    const followers = await Promise.all([1, 2].map(() => ZooKeeperClient.connect(original, { sessionTimeout: SESSION_MS, followConfig: true })));
    const [a, b] = followers as [ZooKeeperClient, ZooKeeperClient];
    const manual = await ZooKeeperClient.connect(original, { sessionTimeout: SESSION_MS });
    const clients = [a, b, manual];
    // Each client's state changes, with their time since the start: what to look at when a session was lost.
    const t0 = performance.now();
    const changes: string[] = [];
    clients.forEach((c, index) => c.onState((event) => changes.push(`${index}:${event}@${Math.round(performance.now() - t0)}`)));
    let observer: ZooKeeperClient | undefined;
    try {
      const sessions = clients.map((c) => c.sessionId);
      const holders: Lease[] = [
        await new Mutex(a, '/reconfig/one').acquire({ timeout: ROUND_TRIPS_MS }),
        await new Mutex(b, '/reconfig/two').acquire({ timeout: ROUND_TRIPS_MS }),
        await new Mutex(manual, '/reconfig/three').acquire({ timeout: ROUND_TRIPS_MS }),
      ];
      // Each lock has a waiter on another client; they queue now and must get in at the end.
      const waiting = [
        new Mutex(b, '/reconfig/one').acquire({ timeout: WAITER_TIMEOUT_MS + harnessBound(2, 3) }),
        new Mutex(manual, '/reconfig/two').acquire({ timeout: WAITER_TIMEOUT_MS + harnessBound(2, 3) }),
        new Mutex(a, '/reconfig/three').acquire({ timeout: WAITER_TIMEOUT_MS + harnessBound(2, 3) }),
      ];
      // Seen by the Promise.all below; a failure before it must not also surface as unhandled.
      for (const w of waiting) w.catch(() => undefined);
      // A user's removal of the config watch must not end the following: the follower sets it again.
      await b.removeAllWatches('/zookeeper/config', 'data');

      const started = performance.now();
      const added = await Promise.all([ensemble.addMember(), ensemble.addMember()]);
      const grown = await ensemble.reconfig({ add: added });
      assert.deepEqual(grown.members.map((m) => m.id), [1, 2, 3, 4, 5]);
      const shrunk = await ensemble.reconfig({ remove: [1, 2, 3] });
      assert.deepEqual(shrunk.members.map((m) => m.id), [4, 5]);
      const newMembers = ensemble.configMembers;
      const newAddresses = newMembers.map((m) => m.connectString);
      assert.deepEqual(ensemble.connectString, shrunk.connectString);

      // The followers move by themselves, the removed members still running.
      await eventually(() => followers.every((c) => c.state === 'connected' && newAddresses.includes(c.server!)), sessionBound(SESSION_MS), 'the followers on new members');
      const followed = performance.now() - started;
      assert.ok(manual.server === undefined || !newAddresses.includes(manual.server), `without followConfig the client stays on ${manual.server}`);
      manual.updateServerAddresses(ensemble.connectString);
      await eventually(() => manual.state === 'connected' && newAddresses.includes(manual.server!), sessionBound(SESSION_MS), 'the manual client on a new member');
      t.diagnostic(`followers on new members ${Math.round(followed)} ms after the first addMember; state changes: ${changes.join(' ')}`);

      await Promise.all(ensemble.members.filter((m) => m.id <= 3).map((m) => m.stop()));
      await ensemble.waitForQuorum();

      // Independently of the clients' own word: the sessions are the same, the servers hold their
      // connections, and the lease nodes still belong to them.
      observer = await ZooKeeperClient.connect(ensemble.connectString);
      assert.deepEqual(clients.map((c) => c.sessionId), sessions, `state changes: ${changes.join(' ')}`);
      for (const [index, c] of clients.entries()) {
        await c.sync('/', { timeout: ROUND_TRIPS_MS });
        const on = await serversOf(c.sessionId, newMembers);
        assert.equal(on.length, 1, `client ${index} is connected to one new member (cons): ${JSON.stringify(on)}`);
        assert.ok(newAddresses.includes(c.server!), `client ${index} says ${c.server}`);
      }
      await observer.sync('/reconfig');
      for (const [index, lease] of holders.entries()) {
        assert.equal(lease.held, true, `lease ${index} still held`);
        assert.equal(lease.signal.aborted, false, `lease ${index} not aborted`);
        assert.equal((await observer.exists(lease.node))?.ephemeralOwner, sessions[index], `lease ${index}'s node belongs to its session`);
      }

      // Every waiter gets in once the holder before it lets go.
      for (const lease of holders) await lease.release();
      const got = await Promise.all(waiting);
      const waiterSessions = [b, manual, a].map((c) => c.sessionId);
      for (const [index, lease] of got.entries()) {
        assert.equal((await observer.exists(lease.node))?.ephemeralOwner, waiterSessions[index], `waiter ${index} holds its node`);
        await lease.release();
      }
    } finally {
      await observer?.close();
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  it('the new members restart as an ensemble of their own, from the configuration the reconfigurations left (the harness writes their files once)', async () => {
    // Rewritten, their files would name the members they started with (1-3 and themselves, no 5 for
    // 4 nor 4 for 5): each would wait for a majority of 4 with 1-3 gone.
    await ensemble.stop();
    await ensemble.start();
    const client = await ZooKeeperClient.connect(ensemble.connectString);
    try {
      assert.deepEqual(parseEnsembleConfig((await client.getConfig()).data).members.map((m) => m.id), [4, 5]);
    } finally {
      await client.close();
    }
  });
});
