import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { WriteStream } from 'node:fs';
import { createWriteStream, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ephemeralNodes } from '../../chaos/contender-nodes.js';
import { FencedResource } from '../../chaos/fenced-resource.js';
import type { HoldKind, Language, OperationRecord } from '../../chaos/history.js';
import { EXCLUSIVE_PATHS, LOCKS } from '../../chaos/history.js';
import type { PeerLanguage } from '../../chaos/peers/peer-process.js';
import { PeerProcess } from '../../chaos/peers/peer-process.js';
import type { WorkerStats } from '../../chaos/worker.js';
import { ZooKeeperClient } from '../../src/index.js';
import { withTimeout } from '../../src/testing/bounded-wait.js';
import { ZooKeeperServer } from '../../src/testing/index.js';
import { LOAD_SLACK_MS, ROUND_TRIPS_MS, harnessBound } from '../support/bounds.js';
import { eventually } from '../support/wait.js';
import { exclusionViolations, maxConcurrent, tokenRegressions } from './operation-checks.js';
import { contendWithZklock } from './zklock-contender.js';

/**
 * The chaos run's Curator and kazoo peers (chaos/peers/) against a real server, beside zklock
 * contenders on the same lock paths, with no fault injected: the peers work and report as the
 * runner expects, and the three libraries exclude one another (checked from the resource's
 * records by test/chaos/operation-checks.ts, not by the chaos checker).
 */

const SESSION_TIMEOUT_MS = 10_000;
/** How long all of them contend once every peer is in its loop. */
const CONTEND_MS = 8_000;
/** The peers' own bounds (CuratorWorker.java, kazoo_worker.py): an acquire, the client's close, the exit after stdin EOF. */
const PEER_ACQUIRE_MS = 10_000;
const PEER_CLOSE_MS = 5_000;
const PEER_EOF_GRACE_MS = 10_000;
/** javac on a first run (its own timeout), a JVM's start and a session on a starved machine. */
const PEER_START_MS = 120_000 + ROUND_TRIPS_MS;
/** A peer finishing its hold and releasing, or an acquire it is waiting in. */
const STOP_MS = PEER_ACQUIRE_MS + ROUND_TRIPS_MS;
const EXIT_MS = PEER_CLOSE_MS + LOAD_SLACK_MS;

/** Which locks each peer takes (LOCKS in chaos/history.ts): its kinds, and the paths of each. */
const PEER_LOCKS: Record<PeerLanguage, Partial<Record<HoldKind, readonly string[]>>> = {
  curator: { mutex: LOCKS.mutexes, read: [LOCKS.readWrite], write: [LOCKS.readWrite], semaphore: [LOCKS.semaphore] },
  kazoo: { mutex: [LOCKS.kazooMutex], read: [LOCKS.kazooReadWrite], write: [LOCKS.kazooReadWrite] },
};
/** The paths where zklock meets each peer (zklock's mutex takes only the first of Curator's two). */
const SHARED_PATHS: Record<PeerLanguage, readonly string[]> = {
  curator: [LOCKS.mutexes[0], LOCKS.readWrite, LOCKS.semaphore],
  kazoo: [LOCKS.kazooMutex, LOCKS.kazooReadWrite],
};

describe('chaos peers: Curator and kazoo workers beside zklock on the same lock paths', () => {
  let server: ZooKeeperServer;
  let resource: FencedResource;
  let admin: ZooKeeperClient;
  let logDir: string;
  let log: WriteStream;
  const started: PeerProcess[] = [];

  before(
    async () => {
      server = await ZooKeeperServer.start();
      resource = await FencedResource.start();
      admin = await ZooKeeperClient.connect(server.connectString);
      logDir = await mkdtemp(join(tmpdir(), 'zklock-peers-'));
      log = createWriteStream(join(logDir, 'peers.log'));
      await once(log, 'open');
    },
    { timeout: harnessBound(1) },
  );

  after(async () => {
    for (const peer of started) if (peer.running) peer.child.kill('SIGKILL');
    await admin?.close();
    await resource?.[Symbol.asyncDispose]();
    await server?.close();
    log?.end();
    if (logDir) await rm(logDir, { recursive: true, force: true });
  });

  async function startPeers(...peers: [PeerLanguage, string, number][]): Promise<PeerProcess[]> {
    const starting = peers.map(([language, name, seed]) =>
      PeerProcess.start({ language, name, seed, connect: server.connectString, resourceUrl: resource.url, sessionTimeout: SESSION_TIMEOUT_MS, log }),
    );
    const processes = await Promise.all(starting);
    started.push(...processes);
    return processes;
  }

  /** The peers' stderr so far, for failure messages. */
  function peerLog(): string {
    return `\n--- peers' log ---\n${readFileSync(join(logDir, 'peers.log'), 'utf8').slice(-6_000)}`;
  }

  function recordsOf(name: string): OperationRecord[] {
    return resource.operations.filter((op) => op.process === name);
  }

  function inLoop(peers: readonly PeerProcess[]): Promise<void> {
    return eventually(() => peers.every((p) => recordsOf(p.name).length > 0), PEER_START_MS, 'every peer began an operation');
  }

  /** Each peer held each of its kinds of lock, and zklock met it on every path they share. */
  function covered(peers: readonly PeerProcess[]): boolean {
    return peers.every((peer) => {
      const kinds = Object.keys(PEER_LOCKS[peer.language]);
      const languagesOn = (path: string): Set<Language> => new Set(resource.operations.filter((op) => op.locks.some((l) => l.lock === path)).map((op) => op.language));
      return kinds.every((kind) => recordsOf(peer.name).some((op) => op.kind === kind)) && SHARED_PATHS[peer.language].every((path) => languagesOn(path).has(peer.language) && languagesOn(path).has('zklock'));
    });
  }

  it(
    'contend with zklock without two exclusive holders at once, in token order, and report and exit as the runner expects',
    { timeout: PEER_START_MS * 2 + CONTEND_MS + ROUND_TRIPS_MS + 2 * STOP_MS + EXIT_MS + LOAD_SLACK_MS },
    async () => {
      const peers = await startPeers(['curator', 'c1', 11], ['kazoo', 'k1', 12]);
      const clients = [await ZooKeeperClient.connect(server.connectString, { sessionTimeout: SESSION_TIMEOUT_MS }), await ZooKeeperClient.connect(server.connectString, { sessionTimeout: SESSION_TIMEOUT_MS })];
      const stop = new AbortController();
      // Two zklock sessions, so that zklock contends with itself too on every path.
      const loops = clients.map((client, i) => contendWithZklock(client, resource, `z${i + 1}`, 100 + i, stop.signal));
      let zklockStats: WorkerStats[];
      try {
        await inLoop(peers);
        await sleep(CONTEND_MS);
        await eventually(() => covered(peers), ROUND_TRIPS_MS, 'every peer held each of its kinds of lock, beside zklock');
      } finally {
        stop.abort();
        for (const peer of peers) peer.send({ type: 'stop' });
        zklockStats = await withTimeout(Promise.all(loops), STOP_MS, () => new Error(`the zklock contenders did not stop within ${STOP_MS} ms`));
      }
      await eventually(() => peers.every((p) => p.idle), STOP_MS, 'every peer idle');
      // Everything released while the sessions still live: a leaked node would stay.
      assert.deepEqual(await ephemeralNodes(admin, '/chaos'), [], 'no contender or lease node left after stop');

      for (const peer of peers) peer.send({ type: 'close' });
      const exits = await withTimeout(Promise.all(peers.map((p) => p.exited)), EXIT_MS, () => new Error(`the peers did not exit within ${EXIT_MS} ms${peerLog()}`));
      assert.deepEqual(exits, [{ code: 0, signal: null }, { code: 0, signal: null }], peerLog());
      await Promise.all(clients.map((c) => c.close()));
      assert.deepEqual(await ephemeralNodes(admin, '/chaos'), [], 'no ephemeral node left once every session closed');

      const operations = resource.operations;
      for (const peer of peers) {
        const records = recordsOf(peer.name);
        assert.ok(peer.stats, `${peer.name} reported its stats${peerLog()}`);
        assert.equal(peer.stats.name, peer.name);
        assert.equal(peer.stats.acquisitions, records.length, `${peer.name}: one operation per acquisition`);
        assert.deepEqual(Object.keys(peer.stats.acquireErrors).filter((code) => code !== 'LOCK_TIMEOUT'), [], `${peer.name} acquire errors: ${JSON.stringify(peer.stats.acquireErrors)}${peerLog()}`);
        const expected = PEER_LOCKS[peer.language];
        assert.deepEqual(new Set(records.map((op) => op.kind)), new Set(Object.keys(expected)), `${peer.name} held each of its kinds of lock`);
        for (const op of records) {
          assert.equal(op.language, peer.language);
          assert.equal(op.worker, `${peer.name}.1`);
          assert.ok(op.id.startsWith(`${peer.name}.1#`), op.id);
          assert.ok(expected[op.kind]?.includes(op.locks[0]!.lock) && op.locks.length === 1, `${op.id}: ${op.kind} on ${JSON.stringify(op.locks)}`);
          assert.equal(op.locks[0]!.fenced, op.kind === 'mutex' || op.kind === 'write', `${op.id}: fenced`);
          assert.match(op.locks[0]!.token, /^[1-9]\d*$/, `${op.id}: a czxid for token`);
        }
        // No fault: one session from start to end, in the hex every language writes alike.
        const sessions = new Set(records.map((op) => op.session));
        assert.equal(sessions.size, 1, `${peer.name} sessions: ${[...sessions].join(', ')}`);
        assert.match([...sessions][0]!, /^[1-9a-f][0-9a-f]*$/);
      }
      for (const [i, client] of clients.entries()) assert.ok(recordsOf(`z${i + 1}`).every((op) => op.session === client.sessionId.toString(16)));
      assert.ok(zklockStats.every((s) => s.acquisitions > 0), `zklock: ${JSON.stringify(zklockStats)}`);

      // No fault, so the resource rejects nothing and every operation ended.
      assert.deepEqual(operations.filter((op) => !op.accepted).map((op) => `${op.id}: ${op.rejected}`), []);
      assert.deepEqual(operations.filter((op) => op.end === undefined).map((op) => op.id), []);
      assert.deepEqual(EXCLUSIVE_PATHS.flatMap((path) => exclusionViolations(operations, path)), [], 'no two holders at once where one is exclusive');
      assert.deepEqual(EXCLUSIVE_PATHS.flatMap((path) => tokenRegressions(operations, path)), [], 'fencing tokens rise with every exclusive hold');
      const semaphoreMax = maxConcurrent(operations, LOCKS.semaphore);
      assert.ok(semaphoreMax >= 1 && semaphoreMax <= LOCKS.semaphoreSize, `${semaphoreMax} semaphore holds at once`);
    },
  );

  it('a peer whose stdin closes (its parent died) closes its client and exits at once', { timeout: PEER_START_MS * 2 + PEER_EOF_GRACE_MS + LOAD_SLACK_MS * 2 }, async () => {
    const peers = await startPeers(['curator', 'c9', 21], ['kazoo', 'k9', 22]);
    await inLoop(peers);
    for (const peer of peers) peer.child.stdin.end();
    // Past the grace the peers halt themselves; within it they close their client and report.
    const bound = PEER_EOF_GRACE_MS + LOAD_SLACK_MS;
    const exits = await withTimeout(Promise.all(peers.map((p) => p.exited)), bound, () => new Error(`a peer still runs ${bound} ms after its stdin closed${peerLog()}`));
    assert.deepEqual(exits, [{ code: 0, signal: null }, { code: 0, signal: null }], peerLog());
    assert.ok(
      peers.every((p) => p.stats !== undefined),
      `each peer closed its client and reported: ${peers.map((p) => `${p.name} ${JSON.stringify(p.stats)}`).join(', ')}${peerLog()}`,
    );
  });
});
