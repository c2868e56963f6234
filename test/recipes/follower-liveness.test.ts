import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { followerFreezeTrial } from '../../chaos/follower-freeze.js';
import { ZooKeeperEnsemble } from '../../src/testing/index.js';

/**
 * The lease's promise through a follower. A follower answers pings itself and passes session
 * touches to the leader only in its replies to the leader's pings; frozen right after answering
 * an idle ping, it never passes that one on, so a holder that trusted the ping kept its lock
 * after the leader expired its session (two holders for about 300 ms in these settings). The
 * longer run, with the margin's distribution, is `npm run chaos:follower`.
 */
describe('lease signal when the holder is connected to a follower', () => {
  let ensemble: ZooKeeperEnsemble;
  const sessionTimeout = 2000;
  before(async () => {
    ensemble = await ZooKeeperEnsemble.start({ size: 3, tickTime: 200 });
  });
  after(async () => {
    await ensemble?.close();
  });

  // Two phases against the heartbeat (a sync every tenth of the timeout) and the pings; the old rule failed at both.
  for (const freezeAfter of [700, 740]) {
    it(`aborts before anyone else acquires when the follower freezes ${freezeAfter} ms into the hold`, { timeout: 60_000 }, async () => {
      const trial = await followerFreezeTrial(ensemble, { sessionTimeout, freezeAfter, lockPath: `/follower-liveness/${freezeAfter}` });
      assert.equal(trial.negotiatedTimeout, sessionTimeout);
      assert.equal(trial.reason, 'SESSION_MAY_HAVE_EXPIRED');
      assert.ok(trial.marginMs > 0, `two holders: the other session acquired ${-trial.marginMs} ms before the holder's signal aborted`);
    });
  }
});
