import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { WatchEvent } from '../../src/index.js';
import { ZooKeeperClient, ZooKeeperError } from '../../src/index.js';
import type { EnsembleMember } from '../../src/testing/index.js';
import { FaultProxy, ZooKeeperEnsemble } from '../../src/testing/index.js';
import { ROUND_TRIPS_MS, sessionBound } from '../support/bounds.js';
import { deferred, eventually, nextEvent, retryOnConnectionLoss } from '../support/wait.js';

describe('client against a 3-member ensemble', () => {
  let ensemble: ZooKeeperEnsemble;

  before(async () => {
    ensemble = await ZooKeeperEnsemble.start({ size: 3, tickTime: 200 });
  });
  after(async () => {
    await ensemble?.close();
  });

  it('moves to another member when its server is killed; watches come along and a change made during the outage fires', async () => {
    // One proxy per member, so the test decides when the client may reach the survivors.
    const proxies = await Promise.all(ensemble.members.map((m) => FaultProxy.start({ targetPort: m.port })));
    const client = await ZooKeeperClient.connect(proxies.map((p) => p.connectString).join(','), { sessionTimeout: 6000 });
    const index = proxies.findIndex((p) => client.server === p.connectString);
    assert.notEqual(index, -1);
    // The admin must not share the member we are about to kill.
    const survivors = ensemble.members.filter((_, i) => i !== index);
    const admin = await ZooKeeperClient.connect(survivors.map((m) => m.connectString).join(','));
    try {
      await client.create('/e-watched', 'v1');
      const changed = deferred<WatchEvent>();
      await client.getData('/e-watched', { watch: changed.resolve });
      const id = client.sessionId;
      for (const [i, proxy] of proxies.entries()) if (i !== index) proxy.refuseNew(true);
      const suspended = nextEvent(client, 'suspended');
      await ensemble.members[index]!.kill();
      await suspended;
      // Killing the leader makes the survivors drop their clients while they elect a new one.
      await retryOnConnectionLoss(admin, () => admin.setData('/e-watched', 'changed while the client was away'));
      const reconnected = nextEvent(client, 'reconnected', sessionBound(client.sessionTimeout));
      for (const proxy of proxies) proxy.refuseNew(false);
      await reconnected;
      assert.equal(client.sessionId, id, 'same session on another member');
      assert.notEqual(client.server, proxies[index]!.connectString);
      assert.deepEqual(await changed.promise, { type: 'dataChanged', path: '/e-watched' });
    } finally {
      await client.close();
      await admin.close();
      await Promise.all(proxies.map((p) => p.close()));
      // Later tests need all three members, even when this one failed.
      if (ensemble.members[index]!.state !== 'running') await ensemble.members[index]!.restart();
      await ensemble.waitForQuorum();
    }
  });

  it('survives a leader failover during a stream of requests: every request settles, none is lost without an error', async () => {
    const client = await ZooKeeperClient.connect(ensemble.connectString, { sessionTimeout: 8000, requestTimeout: 30_000 });
    const admin = await ZooKeeperClient.connect(ensemble.connectString, { sessionTimeout: 8000 });
    let leader: EnsembleMember | undefined;
    try {
      await client.create('/e-stream');
      const acknowledged: string[] = [];
      const failures = new Map<string, number>();
      let stop = false;
      const writer = (async () => {
        while (!stop) {
          try {
            const { path } = await client.create('/e-stream/n-', '', { mode: 'PERSISTENT_SEQUENTIAL' });
            acknowledged.push(path);
          } catch (error) {
            assert.ok(error instanceof ZooKeeperError, String(error));
            failures.set(error.code, (failures.get(error.code) ?? 0) + 1);
            assert.ok(['CONNECTIONLOSS', 'TIMEOUT'].includes(error.code), `unexpected ${error.code}`);
            await client.waitForConnected({ timeout: 30_000 });
          }
        }
      })();
      // Awaited below; until then a failure must not count as an unhandled rejection.
      writer.catch(() => undefined);
      await eventually(() => acknowledged.length >= 10, ROUND_TRIPS_MS, 'the stream flows before the failover');
      leader = await ensemble.leader();
      const before = acknowledged.length;
      await leader.kill();
      await ensemble.waitForQuorum();
      const target = acknowledged.length + 50;
      // The client may have to move to another member within its session, then 50 round trips.
      const deadline = Date.now() + sessionBound(client.sessionTimeout) + ROUND_TRIPS_MS;
      while (acknowledged.length < target && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      stop = true;
      await writer;
      assert.ok(acknowledged.length >= target, `writes resumed after failover (${before} before, ${acknowledged.length} after)`);
      await admin.sync('/e-stream');
      const { children } = await admin.getChildren('/e-stream');
      const stored = new Set(children.map((c) => `/e-stream/${c}`));
      for (const path of acknowledged) assert.ok(stored.has(path), `acknowledged ${path} is stored`);
      const unknownOutcomes = failures.get('CONNECTIONLOSS') ?? 0;
      assert.ok(children.length - acknowledged.length <= unknownOutcomes, 'extra nodes only from requests reported as CONNECTIONLOSS');
    } finally {
      await client.close();
      await admin.close();
      if (leader && leader.state !== 'running') {
        await leader.restart();
        await ensemble.waitForQuorum();
      }
    }
  });
});
