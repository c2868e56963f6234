import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ACL, AcquireOptions, LockAcl, MultiLease, Lease } from '../../src/index.js';
import {
  CREATOR_ALL_ACL,
  MultiLock,
  Mutex,
  NonReentrantMutex,
  OPEN_ACL_UNSAFE,
  Perms,
  READ_ACL_UNSAFE,
  ReadWriteLock,
  Semaphore,
  SimpleLock,
  UNREADABLE_OWNER,
  ZooKeeperClient,
  ZooKeeperError,
  inspectLock,
  requestRevocation,
} from '../../src/index.js';
import { ZooKeeperServer, digestIdentity } from '../../src/testing/index.js';
import { ROUND_TRIPS_MS } from '../support/bounds.js';
import { eventually } from '../support/wait.js';
import { RecipeFixture, sleep } from './fixtures.js';

/** The identities of a shared ensemble: the services that take the locks, their operator, and another team. */
const svc = digestIdentity('svc');
const ops = digestIdentity('ops');
const eve = digestIdentity('eve');
const SUPER = { user: 'super', password: 'super-password' };

/** README's recommended setup (*Locks on a shared ensemble*). */
const RECOMMENDED = {
  path: [svc.acl(Perms.READ | Perms.WRITE | Perms.CREATE | Perms.DELETE), ops.acl(Perms.READ | Perms.DELETE), ...READ_ACL_UNSAFE],
  nodes: [...CREATOR_ALL_ACL, ops.acl(Perms.WRITE), ...READ_ACL_UNSAFE],
} satisfies LockAcl;
/** The nodes' ACL as the server stores it for a node svc created (`auth` stands for the creator's ids). */
const NODES_AS_STORED = [svc.acl(Perms.ALL), ops.acl(Perms.WRITE), ...READ_ACL_UNSAFE];

type AnyLease = Lease | MultiLease;
interface Kind {
  name: string;
  make(client: ZooKeeperClient, path: string, acl?: LockAcl): { acquire(options?: AcquireOptions): Promise<AnyLease> };
  /** A contender that has to wait while `make`'s holds, or undefined when a waiter leaves no node (SimpleLock). */
  rival?(client: ZooKeeperClient, path: string, acl?: LockAcl): { acquire(options?: AcquireOptions): Promise<AnyLease> };
}

const KINDS: Kind[] = [
  // With a lockDelay: its lock path is made PERSISTENT and its release writes a record there.
  { name: 'mutex', make: (c, p, acl) => new Mutex(c, p, { acl, lockDelay: 50 }), rival: (c, p, acl) => new Mutex(c, p, { acl, lockDelay: 50 }) },
  { name: 'non-reentrant', make: (c, p, acl) => new NonReentrantMutex(c, p, { acl }), rival: (c, p, acl) => new NonReentrantMutex(c, p, { acl }) },
  { name: 'read', make: (c, p, acl) => new ReadWriteLock(c, p, { acl }).readLock, rival: (c, p, acl) => new ReadWriteLock(c, p, { acl }).writeLock },
  { name: 'write', make: (c, p, acl) => new ReadWriteLock(c, p, { acl }).writeLock, rival: (c, p, acl) => new ReadWriteLock(c, p, { acl }).readLock },
  { name: 'semaphore', make: (c, p, acl) => new Semaphore(c, p, 1, { acl }), rival: (c, p, acl) => new Semaphore(c, p, 1, { acl }) },
  { name: 'simple', make: (c, p, acl) => new SimpleLock(c, p, { acl }) },
  {
    name: 'multi',
    make: (c, p, acl) => new MultiLock([new Mutex(c, `${p}/a`, { acl }), new ReadWriteLock(c, `${p}/b`, { acl }).writeLock]),
    rival: (c, p, acl) => new MultiLock([new Mutex(c, `${p}/a`, { acl }), new ReadWriteLock(c, `${p}/b`, { acl }).writeLock]),
  },
];

interface Seen {
  path: string;
  ephemeralOwner: bigint;
  acl: ACL[];
}

/** Every node at and under `path`, with its ACL, as the server holds them (read by the super user). */
async function tree(observer: ZooKeeperClient, path: string): Promise<Seen[]> {
  try {
    const { acl, stat } = await observer.getACL(path);
    const { children } = await observer.getChildren(path);
    const below = await Promise.all(children.map((child) => tree(observer, `${path}/${child}`)));
    return [{ path, ephemeralOwner: stat.ephemeralOwner, acl }, ...below.flat()];
  } catch (error) {
    // A contender that went between the listing and the read.
    if (error instanceof ZooKeeperError && error.code === 'NONODE') return [];
    throw error;
  }
}

const sortAcl = (acl: readonly ACL[]): string[] => acl.map((entry) => `${entry.id.scheme}:${entry.id.id}:${entry.perms}`).sort();

function assertNoAuth(error: unknown, path: string): boolean {
  assert.ok(error instanceof ZooKeeperError, `a ZooKeeperError, got ${String(error)}`);
  assert.equal(error.code, 'NOAUTH');
  assert.ok(error.path?.startsWith(path), `names the path: ${error.path} under ${path}`);
  return true;
}

describe('ACLs on the nodes a recipe creates (issue 29)', () => {
  let zk: RecipeFixture;
  let observer: ZooKeeperClient;
  before(async () => {
    zk = await RecipeFixture.start({ superDigest: SUPER });
    observer = await zk.client({ auth: [{ scheme: 'digest', auth: `${SUPER.user}:${SUPER.password}` }] });
  });
  after(async () => {
    await zk?.close();
  });

  /** No node of `client`'s session under `path` (one given up may still be on its way out: a few round trips). */
  async function assertNoNodesOf(client: ZooKeeperClient, path: string): Promise<void> {
    const left = async (): Promise<string[]> => (await tree(observer, path)).filter((node) => node.ephemeralOwner === client.sessionId).map((node) => node.path);
    await eventually(async () => (await left()).length === 0, ROUND_TRIPS_MS, 'no node of this session is left').catch(() => undefined);
    assert.deepEqual(await left(), [], 'no node of this session is left');
  }

  it('the client\'s defaultAcl (a list or a function of the path) is every create\'s without an acl: create, ensurePath\'s parents, a transaction\'s creates', async () => {
    const listed = await zk.client({ auth: svc.auth, defaultAcl: [svc.acl(Perms.ALL)] });
    await listed.create('/default-list');
    await listed.multi([{ op: 'create', path: '/default-list/in-multi' }]);
    await listed.create('/default-list/explicit', undefined, { acl: OPEN_ACL_UNSAFE });
    assert.deepEqual(sortAcl((await observer.getACL('/default-list')).acl), sortAcl([svc.acl(Perms.ALL)]));
    assert.deepEqual(sortAcl((await observer.getACL('/default-list/in-multi')).acl), sortAcl([svc.acl(Perms.ALL)]));
    assert.deepEqual(sortAcl((await observer.getACL('/default-list/explicit')).acl), sortAcl(OPEN_ACL_UNSAFE), 'an explicit acl wins');

    const asked: string[] = [];
    const provided = await zk.client({
      auth: svc.auth,
      defaultAcl: (path) => (asked.push(path), path.endsWith('/leaf') ? [svc.acl(Perms.ALL)] : [svc.acl(Perms.ALL), ...READ_ACL_UNSAFE]),
    });
    await provided.ensurePath('/default-fn/mid/leaf');
    assert.deepEqual([...new Set(asked)].sort(), ['/default-fn', '/default-fn/mid', '/default-fn/mid/leaf'], 'asked for every node created, with its path');
    assert.deepEqual(sortAcl((await observer.getACL('/default-fn/mid')).acl), sortAcl([svc.acl(Perms.ALL), ...READ_ACL_UNSAFE]));
    assert.deepEqual(sortAcl((await observer.getACL('/default-fn/mid/leaf')).acl), sortAcl([svc.acl(Perms.ALL)]));

    await assert.rejects(zk.client({ defaultAcl: [] }), (error: unknown) => error instanceof ZooKeeperError && error.code === 'INVALID_ARGUMENT' && /defaultAcl/.test(error.message));
    const empty = await zk.client({ defaultAcl: () => [] });
    await assert.rejects(empty.create('/default-empty'), (error: unknown) => {
      assert.ok(error instanceof ZooKeeperError);
      assert.equal(error.code, 'INVALID_ARGUMENT');
      assert.equal(error.path, '/default-empty');
      return true;
    });
    assert.equal(await observer.exists('/default-empty'), null);
  });

  for (const kind of KINDS) {
    it(`${kind.name}: every node it creates (lock path, missing parents, contender and lease nodes, a waiter's) carries the lock's acl`, async () => {
      await zk.admin.ensurePath('/acl-kinds');
      const root = `/acl-kinds/${kind.name}`;
      const lockPath = `${root}/deep/lock`;
      const holder = await zk.client({ auth: svc.auth });
      const waiter = await zk.client({ auth: svc.auth });
      const lease = await kind.make(holder, lockPath, RECOMMENDED).acquire({ timeout: ROUND_TRIPS_MS });
      const waiting = kind.rival?.(waiter, lockPath, RECOMMENDED).acquire({ timeout: ROUND_TRIPS_MS });
      if (waiting) await eventually(async () => (await tree(observer, root)).some((node) => node.ephemeralOwner === waiter.sessionId), ROUND_TRIPS_MS, 'the waiter queued');

      const nodes = await tree(observer, root);
      assert.ok(nodes.some((node) => node.ephemeralOwner === holder.sessionId), 'the holder\'s node is listed');
      for (const node of nodes) {
        const expected = node.ephemeralOwner === 0n ? RECOMMENDED.path : NODES_AS_STORED;
        assert.deepEqual(sortAcl(node.acl), sortAcl(expected), `${node.path} (${node.ephemeralOwner === 0n ? 'path' : 'node'})`);
      }
      await lease.release();
      const next = await waiting;
      await next?.release();
      // The release (and its record, for the mutex with a lockDelay) changed no ACL.
      for (const node of await tree(observer, root)) assert.deepEqual(sortAcl(node.acl), sortAcl(RECOMMENDED.path), node.path);
    });
  }

  for (const kind of KINDS) {
    it(`${kind.name}: an identity without CREATE on a protected lock cannot queue into it (NOAUTH with the path, no node of its own), the holder keeps its lease`, async () => {
      const lockPath = `/acl-queue/${kind.name}`;
      const holder = await zk.client({ auth: svc.auth });
      const lease = await kind.make(holder, lockPath, RECOMMENDED).acquire({ timeout: ROUND_TRIPS_MS });
      for (const auth of [eve.auth, []]) {
        const stranger = await zk.client({ auth });
        await assert.rejects(kind.make(stranger, lockPath).acquire({ timeout: ROUND_TRIPS_MS }), (error) => assertNoAuth(error, lockPath));
        await assertNoNodesOf(stranger, lockPath);
      }
      assert.equal(lease.signal.aborted, false, 'the holder keeps its lease');
      await lease.release();
    });
  }

  it('another identity cannot delete, revoke or record over a holder of a protected mutex (NOAUTH each, the holder keeps its lease); the operator can revoke and delete', async () => {
    const lockPath = '/acl-protected/lock';
    const holder = await zk.client({ auth: svc.auth });
    const lease = await new Mutex(holder, lockPath, { acl: RECOMMENDED, revocable: true }).acquire({ timeout: ROUND_TRIPS_MS });
    const before = await observer.exists(lease.node);
    for (const auth of [eve.auth, []]) {
      const stranger = await zk.client({ auth });
      await assert.rejects(stranger.delete(lease.node), (error) => assertNoAuth(error, lease.node));
      await assert.rejects(requestRevocation(stranger, lease.node), (error) => assertNoAuth(error, lease.node));
      await assert.rejects(stranger.setData(lockPath, Buffer.from(`zklock:released:${lease.node.slice(lockPath.length + 1)}`)), (error) => assertNoAuth(error, lockPath));
    }
    // Checked by the server: the same node, unwritten, and the lock path's data untouched.
    const after = await observer.exists(lease.node);
    assert.equal(after?.czxid, before?.czxid);
    assert.equal(after?.version, before?.version);
    assert.equal((await observer.getData(lockPath)).data.length, 0);
    assert.equal(lease.signal.aborted, false);
    assert.equal(lease.revocationRequested.aborted, false);

    const operator = await zk.client({ auth: ops.auth });
    assert.equal(await requestRevocation(operator, lease.node), true);
    await eventually(() => lease.revocationRequested.aborted, ROUND_TRIPS_MS, 'the operator\'s request reached the holder');
    await operator.delete(lease.node);
    await eventually(() => lease.signal.aborted, ROUND_TRIPS_MS, 'the operator\'s forced release ended the lease');
  });

  it('the liveness proof\'s setACL keeps our node\'s ACL; one that gives its creator no ADMIN: the acquire rejects with NOAUTH and leaves no node', async () => {
    const lockPath = '/acl-no-admin/lock';
    const client = await zk.client({ auth: svc.auth, sessionTimeout: 2000 });
    // No lock taken yet (no heartbeat), idle past the proof the handshake gave: proveFresh writes.
    await sleep(1.5 * client.sessionTimeout);
    const proven = await new Mutex(client, '/acl-proof/lock', { acl: RECOMMENDED }).acquire({ timeout: ROUND_TRIPS_MS });
    const { acl: stored, stat } = await observer.getACL(proven.node);
    assert.ok(stat.aversion > 0, 'proveFresh set the ACL');
    assert.deepEqual(sortAcl(stored), sortAcl(NODES_AS_STORED), 'the ACL it was created with, not OPEN_ACL_UNSAFE');
    await proven.release();

    // A margin of all but a millisecond of the session timeout (it must stay below it): no proof
    // reaches past it, so proveFresh writes at once.
    const safetyMargin = client.sessionTimeout - 1;
    const acl = { path: [svc.acl(Perms.ALL)], nodes: [svc.acl(Perms.READ | Perms.WRITE | Perms.DELETE)] } satisfies LockAcl;
    await assert.rejects(new Mutex(client, lockPath, { acl, safetyMargin }).acquire({ timeout: ROUND_TRIPS_MS }), (error) => assertNoAuth(error, lockPath));
    await assertNoNodesOf(client, lockPath);
  });

  it('an identity that may create but not list contenders: NOAUTH, and the contender it made is deleted', async () => {
    const lockPath = '/acl-create-only/lock';
    await observer.ensurePath(lockPath, { acl: [svc.acl(Perms.ALL), eve.acl(Perms.CREATE | Perms.DELETE)] });
    const stranger = await zk.client({ auth: eve.auth });
    await assert.rejects(new Mutex(stranger, lockPath).acquire({ timeout: ROUND_TRIPS_MS }), (error) => assertNoAuth(error, lockPath));
    await assertNoNodesOf(stranger, lockPath);
  });

  it('lock-delay on a lock path its holders may not write: the refused record is no proof, the next acquire is not clean', async () => {
    const lockPath = '/acl-no-record/lock';
    const acl = { path: [svc.acl(Perms.READ | Perms.CREATE | Perms.DELETE)], nodes: CREATOR_ALL_ACL } satisfies LockAcl;
    const client = await zk.client({ auth: svc.auth });
    const first = await new Mutex(client, lockPath, { acl, lockDelay: 50 }).acquire({ timeout: ROUND_TRIPS_MS });
    await first.release();
    assert.equal((await observer.getData(lockPath)).data.length, 0, 'no record written');
    const other = await zk.client({ auth: svc.auth });
    const second = await new Mutex(other, lockPath, { acl, lockDelay: 50 }).acquire({ timeout: ROUND_TRIPS_MS });
    assert.notEqual(second.handoff, 'clean');
    assert.ok(second.lockDelayed >= 50, `delayed ${second.lockDelayed} ms`);
    await second.release();
  });

  it('inspection by an identity that may list the lock but not read its contenders shows them as unreadable, holding and waiting, not an empty lock', async () => {
    const acl = { path: [svc.acl(Perms.ALL), ...READ_ACL_UNSAFE], nodes: CREATOR_ALL_ACL } satisfies LockAcl;
    const holder = await zk.client({ auth: svc.auth });
    const waiter = await zk.client({ auth: svc.auth });
    const stranger = await zk.client({ auth: eve.auth });
    const cases = [
      { path: '/acl-inspect/mutex', kind: KINDS.find((k) => k.name === 'mutex')!, inspect: () => inspectLock(stranger, '/acl-inspect/mutex') },
      { path: '/acl-inspect/sem', kind: KINDS.find((k) => k.name === 'semaphore')!, inspect: () => inspectLock(stranger, '/acl-inspect/sem') },
      { path: '/acl-inspect/simple', kind: KINDS.find((k) => k.name === 'simple')!, inspect: () => new SimpleLock(stranger, '/acl-inspect/simple').participants() },
    ];
    for (const { path, kind, inspect } of cases) {
      const lease = await kind.make(holder, path, acl).acquire({ timeout: ROUND_TRIPS_MS });
      const waiting = kind.rival?.(waiter, path, acl).acquire({ timeout: ROUND_TRIPS_MS });
      if (waiting) await eventually(async () => (await tree(observer, path)).some((node) => node.ephemeralOwner === waiter.sessionId), ROUND_TRIPS_MS, 'the waiter queued');
      const state = await inspect();
      assert.deepEqual(
        state.holders.map((c) => [c.sessionId, c.owner.id, c.unreadable]),
        [[holder.sessionId, UNREADABLE_OWNER, true]],
        `${path}: the holder, unreadable`,
      );
      assert.deepEqual(
        state.waiters.map((c) => [c.sessionId, c.unreadable]),
        waiting ? [[waiter.sessionId, true]] : [],
        `${path}: the waiter, unreadable`,
      );
      await lease.release();
      await (await waiting)?.release();
    }
  });

  it('a holder without DELETE on the lock path: release rejects with NOAUTH naming its node, which goes with the session', async () => {
    const lockPath = '/acl-no-delete/lock';
    const acl = { path: [svc.acl(Perms.READ | Perms.CREATE | Perms.WRITE)], nodes: CREATOR_ALL_ACL } satisfies LockAcl;
    const client = await zk.client({ auth: svc.auth });
    const lease = await new Mutex(client, lockPath, { acl }).acquire({ timeout: ROUND_TRIPS_MS });
    await assert.rejects(lease.release(), (error) => assertNoAuth(error, lease.node));
    assert.ok(await observer.exists(lease.node), 'the node stays while the session lives');
    await client.close();
    assert.equal(await observer.exists(lease.node), null, 'and goes with it');
  });
});

describe('ACLs with x509 identities (the harness\'s x509Clients)', () => {
  let server: ZooKeeperServer;
  before(async () => {
    server = await ZooKeeperServer.start({ x509Clients: ['svc', 'eve'] });
  });
  after(async () => {
    await server?.close();
  });

  it('a lock protected for one certificate\'s identity: the other cannot queue into it or delete its holder (NOAUTH), the holder keeps its lease', async () => {
    const connect = (name: string): Promise<ZooKeeperClient> => ZooKeeperClient.connect(server.secureConnectString!, { tls: server.x509Client(name).tls });
    const [holder, stranger] = await Promise.all([connect('svc'), connect('eve')]);
    try {
      const svcId = { scheme: 'x509', id: server.x509Client('svc').id };
      const lockPath = '/x509/lock';
      const lease = await new Mutex(holder, lockPath, { acl: [{ perms: Perms.ALL, id: svcId }, ...READ_ACL_UNSAFE] }).acquire({ timeout: ROUND_TRIPS_MS });
      assert.deepEqual(sortAcl((await stranger.getACL(lease.node)).acl), sortAcl([{ perms: Perms.ALL, id: svcId }, ...READ_ACL_UNSAFE]));
      await assert.rejects(new Mutex(stranger, lockPath).acquire({ timeout: ROUND_TRIPS_MS }), (error) => assertNoAuth(error, lockPath));
      await assert.rejects(stranger.delete(lease.node), (error) => assertNoAuth(error, lease.node));
      assert.deepEqual((await stranger.getChildren(lockPath)).children, [lease.node.slice(lockPath.length + 1)], 'the holder\'s node alone');
      assert.equal(lease.signal.aborted, false);
      await lease.release();
    } finally {
      await Promise.all([holder.close(), stranger.close()]);
    }
  });
});
