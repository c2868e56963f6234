import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { WatchEvent } from '../../src/index.js';
import { Mutex, ZooKeeperClient, ZooKeeperError } from '../../src/index.js';
import { MAX_PROBE_INTERVAL_MS, PROBE_TIMEOUT_MS } from '../../src/connection/hosts/rw-probe.js';
import type { EnsembleMember } from '../../src/testing/index.js';
import { ZooKeeperEnsemble } from '../../src/testing/index.js';
import { ROUND_TRIPS_MS, harnessBound } from '../support/bounds.js';
import { within } from '../recipes/fixtures.js';
import { recordEvents } from '../support/events.js';
import { expectNothingLeft, openResources } from '../support/resources.js';
import { deferred, eventually } from '../support/wait.js';

/**
 * Long sessions, so that a connection to a paused server is dropped (after 2/3 of it) only long
 * after the test's own bounds: the probe test needs the read-only connection to stay up.
 */
const SESSION_MS = 240_000;

/**
 * How long a client on a paused read-only server may take to find a read/write member once a
 * majority serves: the next probe comes within the longest back-off, and on a loaded machine it
 * may miss (a JVM descheduled past the probe's own bound reads as "not read/write"); the probe
 * after it goes to the other majority member.
 */
const FIND_READ_WRITE_MS = 2 * (MAX_PROBE_INTERVAL_MS + PROBE_TIMEOUT_MS) + ROUND_TRIPS_MS;

/** The state changes among the recorded events, without their reasons. */
function states(events: readonly string[]): string[] {
  return events.filter((e) => e.startsWith('state ')).map((e) => e.slice('state '.length).split(':')[0]!);
}

describe('read-only mode in a 3-member ensemble whose majority is stopped', () => {
  let ensemble: ZooKeeperEnsemble;
  let client: ZooKeeperClient | undefined;
  let survivor: EnsembleMember | undefined;
  let majority: EnsembleMember[] = [];

  before(async () => {
    ensemble = await ZooKeeperEnsemble.start({ size: 3, tickTime: 200, readOnlyMode: true, maxSessionTimeout: SESSION_MS });
    const admin = await ZooKeeperClient.connect(ensemble.connectString);
    await admin.create('/ro-data', 'v1');
    await admin.create('/ro-watched', 'v1');
    await admin.close();
  });
  afterEach(async () => {
    await client?.close();
    client = undefined;
    // The next test needs all three members serving, even when this one failed midway.
    if (survivor?.state === 'paused') await survivor.resume();
    await ensemble.start();
  });
  after(async () => {
    await ensemble?.close();
  });

  /**
   * Stops the majority, keeping the leader as the survivor: the member slowest to notice the lost
   * quorum. Returns the survivor.
   */
  async function stopMajority(): Promise<EnsembleMember> {
    const leader = await ensemble.waitForQuorum();
    survivor = leader;
    majority = ensemble.members.filter((m) => m !== leader);
    await Promise.all(majority.map((m) => m.stop()));
    return leader;
  }

  /** A readOnly client connects to the survivor once it serves read-only. */
  async function connectReadOnly(survivor: EnsembleMember): Promise<ZooKeeperClient> {
    // Until the survivor notices the lost quorum (a leader checks its followers every other half
    // tick), it still answers as a read/write member and, with local sessions on, hands a
    // connecting client a read/write local session at once: wait for its read-only mode first.
    // It starts serving read-only a couple of seconds after losing its quorum: a server start.
    await eventually(async () => (await survivor.status())?.mode === 'read-only', harnessBound(1), 'the survivor serving read-only');
    const readOnly = await ZooKeeperClient.connect(ensemble.connectString, { readOnly: true, sessionTimeout: SESSION_MS, timeout: harnessBound(1) });
    client = readOnly;
    assert.equal(readOnly.readOnly, true);
    assert.equal(readOnly.server, survivor.connectString);
    assert.equal((await readOnly.getData('/ro-data')).data.toString(), 'v1', 'reads work');
    await assert.rejects(readOnly.create('/ro-write'), { code: 'NOTREADONLY', path: '/ro-write' });
    await assert.rejects(new Mutex(readOnly, '/ro-lock').acquire({ timeout: ROUND_TRIPS_MS }), (e) => e instanceof ZooKeeperError && e.code === 'NOTREADONLY');
    assert.equal(readOnly.sessionAliveUntil(), readOnly.sessionTimeout, 'a read-only handshake proves nothing to a leader');
    return readOnly;
  }

  /** Waits until the client holds a read/write session, then checks that it can write and keep it. */
  async function expectReadWrite(readOnly: ZooKeeperClient, provisional: bigint, bound: number): Promise<void> {
    await eventually(() => readOnly.state === 'connected' && !readOnly.readOnly, bound, 'a read/write session');
    assert.notEqual(readOnly.sessionId, provisional, 'a new session: the read-only one was local to its server');
    await readOnly.create('/ro-written');
    await readOnly.delete('/ro-written');
  }

  it('when the majority returns, the read-only session is followed by a new read/write session: connected, never expired', async () => {
    const readOnly = await connectReadOnly(await stopMajority());
    const provisional = readOnly.sessionId;
    const changed = deferred<WatchEvent>();
    await readOnly.getData('/ro-watched', { watch: changed.resolve });
    const events = recordEvents(readOnly);
    await Promise.all(majority.map((m) => m.start()));
    // The survivor rejoins the quorum and drops its read-only clients, or the probe finds a majority member first.
    await expectReadWrite(readOnly, provisional, harnessBound(1) + FIND_READ_WRITE_MS);
    const seen = states(events);
    assert.equal(seen.at(-1), 'connected', events.join(', '));
    assert.ok(seen.every((s) => ['suspended', 'connecting', 'connected'].includes(s)), `no expired, no reconnected: ${events.join(', ')}`);
    const admin = await ZooKeeperClient.connect(ensemble.connectString);
    try {
      await admin.setData('/ro-watched', 'v2');
    } finally {
      await admin.close();
    }
    assert.deepEqual(await within(changed.promise, ROUND_TRIPS_MS, 'the watch set read-only fires'), { type: 'dataChanged', path: '/ro-watched' });
  });

  it('while its server stays cut off from the majority, the client probes, finds a read/write member and moves there by itself', async () => {
    const survivor = await stopMajority();
    const readOnly = await connectReadOnly(survivor);
    const provisional = readOnly.sessionId;
    // Until the move, the read-only connection must stay up: dropped, the client would reconnect without probing.
    assert.ok((readOnly.sessionTimeout * 2) / 3 > harnessBound(2) + FIND_READ_WRITE_MS, 'the read timeout outlasts the restart and the probes');
    const events = recordEvents(readOnly);
    // Paused, the survivor neither answers its clients nor takes part in the election: the restarted members form a quorum without it.
    await survivor.pause();
    await Promise.all(majority.map((m) => m.start()));
    await expectReadWrite(readOnly, provisional, FIND_READ_WRITE_MS);
    assert.deepEqual(states(events), ['connecting', 'connected'], `a planned move: no suspended, no expired (${events.join(', ')})`);
    assert.ok(majority.some((m) => m.connectString === readOnly.server), `now on a majority member, not ${readOnly.server}`);
  });

  it('close() while probing for a read/write server leaves no timer or socket behind', async () => {
    const survivor = await stopMajority();
    const resourcesBefore = openResources();
    const readOnly = await connectReadOnly(survivor);
    // Probes of the stopped members are refused at once: let a few go by.
    await new Promise((r) => setTimeout(r, 500));
    await readOnly.close();
    await expectNothingLeft(resourcesBefore);
  });
});

describe('a read-only member that cannot create sessions', () => {
  it('refuses the handshake with NOTREADONLY, reported as such (not as malformed bytes), and the client keeps trying', async () => {
    // readonlymode without localSessionsEnabled: the survivor serves read-only but answers a new
    // session with a bare reply header (ReadOnlyRequestProcessor refuses a global createSession).
    await using ensemble = await ZooKeeperEnsemble.start({ size: 3, tickTime: 200, jvmArgs: ['-Dreadonlymode.enabled=true'] });
    await Promise.all([ensemble.member(2).stop(), ensemble.member(3).stop()]);
    await using client = new ZooKeeperClient(ensemble.member(1).connectString, { readOnly: true });
    const events = recordEvents(client);
    const reasons: unknown[] = [];
    client.on('connectionError', (reason: unknown) => reasons.push(reason));
    await eventually(() => events.includes('connectionError:NOTREADONLY'), harnessBound(1), 'a NOTREADONLY refusal');
    assert.ok(reasons.some((r) => /localSessionsEnabled=true/.test(String(r))), 'the refusal says what the server lacks');
    assert.equal(client.state, 'connecting');
    assert.ok(!events.some((e) => e.endsWith(':PROTOCOL_ERROR')), events.join(', '));
  });
});
