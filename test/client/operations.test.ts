import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { WatchEvent } from '../../src/index.js';
import { CREATOR_ALL_ACL, OPEN_ACL_UNSAFE, Perms, READ_ACL_UNSAFE, ZooKeeperClient, ZooKeeperError, digestAcl } from '../../src/index.js';
import { ZooKeeperServer } from '../../src/testing/index.js';
import { removedWatcher } from '../support/removed-watcher.js';
import { deferred } from '../support/wait.js';

describe('client operations against a real server', () => {
  let server: ZooKeeperServer;
  let client: ZooKeeperClient;

  before(async () => {
    server = await ZooKeeperServer.start({ extendedTypes: true });
    client = await ZooKeeperClient.connect(server.connectString, { sessionTimeout: 6000 });
  });
  after(async () => {
    await client?.close();
    await server?.close();
  });

  it('creates in every mode and returns the path with the create2 Stat', async () => {
    const persistent = await client.create('/ops-p', 'data');
    assert.equal(persistent.path, '/ops-p');
    assert.equal(persistent.stat.dataLength, 4);
    assert.equal(persistent.stat.ephemeralOwner, 0n);

    const ephemeral = await client.create('/ops-e', null, { mode: 'EPHEMERAL' });
    assert.equal(ephemeral.stat.ephemeralOwner, client.sessionId);

    const seq1 = await client.create('/ops-p/s-', '', { mode: 'PERSISTENT_SEQUENTIAL' });
    const seq2 = await client.create('/ops-p/s-', '', { mode: 'EPHEMERAL_SEQUENTIAL' });
    assert.match(seq1.path, /^\/ops-p\/s-\d{10}$/);
    assert.ok(Number(seq2.path.slice(-10)) > Number(seq1.path.slice(-10)));
    assert.ok(seq2.stat.czxid > seq1.stat.czxid);

    const container = await client.create('/ops-c', '', { mode: 'CONTAINER' });
    assert.equal(container.path, '/ops-c');
    const ttl = await client.create('/ops-ttl', 'x', { mode: 'PERSISTENT_WITH_TTL', ttl: 60_000 });
    assert.equal(ttl.stat.dataLength, 1);
    const ttlSeq = await client.create('/ops-ttl-', 'x', { mode: 'PERSISTENT_SEQUENTIAL_WITH_TTL', ttl: 60_000 });
    assert.match(ttlSeq.path, /^\/ops-ttl-\d{10}$/);
  });

  it('reports server errors with code, numeric code, path and operation', async () => {
    await client.create('/ops-dup');
    await assert.rejects(client.create('/ops-dup'), { code: 'NODEEXISTS', zkCode: -110, path: '/ops-dup', op: 'create' });
    await assert.rejects(client.getData('/ops-missing'), { code: 'NONODE', zkCode: -101, path: '/ops-missing', op: 'getData' });
    await assert.rejects(client.create('/ops-missing/child'), { code: 'NONODE' });
    await client.create('/ops-dup/child');
    await assert.rejects(client.delete('/ops-dup'), { code: 'NOTEMPTY' });
    await assert.rejects(client.create('/ops-e2', '', { mode: 'EPHEMERAL' }).then(() => client.create('/ops-e2/x')), { code: 'NOCHILDRENFOREPHEMERALS' });
  });

  it('gets, sets (with versions), checks existence and deletes', async () => {
    const { stat } = await client.create('/ops-v', 'one');
    assert.equal((await client.getData('/ops-v')).data.toString(), 'one');
    const after1 = await client.setData('/ops-v', 'two', { version: stat.version });
    assert.equal(after1.version, stat.version + 1);
    await assert.rejects(client.setData('/ops-v', 'three', { version: stat.version }), { code: 'BADVERSION' });
    assert.equal((await client.exists('/ops-v'))?.version, after1.version);
    await assert.rejects(client.delete('/ops-v', { version: 0 }), { code: 'BADVERSION' });
    await client.delete('/ops-v', { version: after1.version });
    assert.equal(await client.exists('/ops-v'), null);
    await client.create('/ops-empty');
    assert.equal((await client.getData('/ops-empty')).data.length, 0);
  });

  it('lists children with the parent Stat, and counts all descendants', async () => {
    await client.create('/ops-tree');
    await client.create('/ops-tree/a');
    await client.create('/ops-tree/b');
    await client.create('/ops-tree/a/x');
    const { children, stat } = await client.getChildren('/ops-tree');
    assert.deepEqual(children.sort(), ['a', 'b']);
    assert.equal(stat.numChildren, 2);
    assert.equal(await client.getAllChildrenNumber('/ops-tree'), 3);
  });

  it('reads and writes ACLs; a second identity without auth gets NOAUTH', async () => {
    await client.create('/ops-acl', 'secret', { acl: [digestAcl('alice', 'pw'), { perms: Perms.READ, id: { scheme: 'world', id: 'anyone' } }] });
    const { acl } = await client.getACL('/ops-acl');
    assert.equal(acl.length, 2);
    assert.equal(acl.find((a) => a.id.scheme === 'digest')?.perms, Perms.ALL);

    const stranger = await ZooKeeperClient.connect(server.connectString);
    try {
      assert.equal((await stranger.getData('/ops-acl')).data.toString(), 'secret');
      await assert.rejects(stranger.setData('/ops-acl', 'mine'), { code: 'NOAUTH', path: '/ops-acl' });
      await stranger.addAuth('digest', 'alice:pw');
      await stranger.setData('/ops-acl', 'mine');
      const stat = await stranger.setACL('/ops-acl', READ_ACL_UNSAFE);
      assert.equal(stat.aversion, 1);
      await assert.rejects(stranger.setData('/ops-acl', 'again'), { code: 'NOAUTH' });
    } finally {
      await stranger.close();
    }
  });

  it('creates with the creator-only ACL after digest auth', async () => {
    const owner = await ZooKeeperClient.connect(server.connectString, { auth: [{ scheme: 'digest', auth: 'bob:pw' }] });
    const other = await ZooKeeperClient.connect(server.connectString);
    try {
      await owner.create('/ops-creator', 'x', { acl: CREATOR_ALL_ACL });
      await assert.rejects(other.getData('/ops-creator'), { code: 'NOAUTH' });
      assert.equal((await owner.getData('/ops-creator')).data.toString(), 'x');
    } finally {
      await owner.close();
      await other.close();
    }
  });

  it('a request made before addAuth runs without that identity, even in the same tick', async () => {
    const c = await ZooKeeperClient.connect(server.connectString);
    try {
      // With no identity yet, the server refuses a creator-only ACL.
      const before = c.create('/ops-before-auth', 'x', { acl: CREATOR_ALL_ACL });
      const auth = c.addAuth('digest', 'dave:pw');
      await assert.rejects(before, { code: 'INVALIDACL' });
      await auth;
      await c.create('/ops-after-auth', 'x', { acl: CREATOR_ALL_ACL });
    } finally {
      await c.close();
    }
  });

  it("a request made by the caller's own code while another is being encoded leaves that one's frame intact", async () => {
    let nested: Promise<unknown> | undefined;
    // A getter on the ACL the create is encoding, which calls the client again.
    const acl = [
      {
        get perms(): number {
          nested ??= client.exists('/zookeeper');
          return Perms.ALL;
        },
        id: { scheme: 'world', id: 'anyone' },
      },
    ];
    const created = await client.create('/ops-reentry', 'd', { acl });
    assert.equal(created.path, '/ops-reentry');
    assert.ok(await nested, 'the nested request was answered too');
    assert.equal((await client.getData('/ops-reentry')).data.toString(), 'd');
  });

  it('a wrong digest password is a different identity: NOAUTH', async () => {
    const c = await ZooKeeperClient.connect(server.connectString);
    try {
      await c.create('/ops-acl2', '', { acl: [digestAcl('carol', 'right')] });
      await c.addAuth('digest', 'carol:wrong');
      await assert.rejects(c.getData('/ops-acl2'), { code: 'NOAUTH' });
    } finally {
      await c.close();
    }
  });

  it('syncs', async () => {
    await client.sync('/');
    await client.sync('/ops-p');
  });

  it('runs a transaction with typed results, or names the failing op and applies nothing', async () => {
    await client.create('/ops-tx', 'v0');
    const results = await client.multi([
      { op: 'check', path: '/ops-tx', version: 0 },
      { op: 'create', path: '/ops-tx/a', data: 'a' },
      { op: 'setData', path: '/ops-tx', data: 'v1' },
      { op: 'delete', path: '/ops-tx/a' },
    ]);
    assert.deepEqual(
      results.map((r) => r.op),
      ['check', 'create', 'setData', 'delete'],
    );
    assert.equal(results[1]?.op === 'create' && results[1].path, '/ops-tx/a');
    assert.equal(results[2]?.op === 'setData' && results[2].stat.version, 1);

    await assert.rejects(
      client.multi([
        { op: 'create', path: '/ops-tx/b' },
        { op: 'check', path: '/ops-tx', version: 0 },
        { op: 'delete', path: '/ops-tx' },
      ]),
      (error: { name: string; code: string; failedIndex: number; codes: string[]; path: string }) => {
        assert.equal(error.name, 'MultiError');
        assert.equal(error.code, 'BADVERSION');
        assert.equal(error.failedIndex, 1);
        assert.equal(error.path, '/ops-tx');
        assert.deepEqual(error.codes, ['OK', 'BADVERSION', 'RUNTIMEINCONSISTENCY']);
        return true;
      },
    );
    assert.equal(await client.exists('/ops-tx/b'), null);
  });

  it('reads several nodes in one multiRead, with per-read errors', async () => {
    await client.create('/ops-mr', 'r');
    await client.create('/ops-mr/c');
    const [data, children, missing] = await client.multiRead([
      { type: 'getData', path: '/ops-mr' },
      { type: 'getChildren', path: '/ops-mr' },
      { type: 'getData', path: '/ops-mr-none' },
    ]);
    assert.ok(!(data instanceof ZooKeeperError) && data?.op === 'getData' && data.data.toString() === 'r');
    assert.ok(!(children instanceof ZooKeeperError) && children?.op === 'getChildren' && children.children[0] === 'c');
    assert.ok(missing instanceof ZooKeeperError && missing.code === 'NONODE');
  });

  it('lists the session ephemerals', async () => {
    const c = await ZooKeeperClient.connect(server.connectString);
    try {
      await c.create('/ops-eph-a', '', { mode: 'EPHEMERAL' });
      await c.create('/ops-eph-b', '', { mode: 'EPHEMERAL' });
      assert.deepEqual((await c.getEphemerals('/ops-eph')).sort(), ['/ops-eph-a', '/ops-eph-b']);
    } finally {
      await c.close();
    }
    assert.equal(await client.exists('/ops-eph-a'), null, 'close ends the session at once');
  });

  it('creates a path with its parents, as containers when asked', async () => {
    await client.ensurePath('/ops-deep/a/b/c', { container: true });
    await client.ensurePath('/ops-deep/a/b/c', { container: true });
    assert.ok(await client.exists('/ops-deep/a/b/c'));
    assert.equal((await client.exists('/ops-deep/a'))?.ephemeralOwner, 0n);
  });

  it('delivers a one-shot watch once to every callback of that path and kind', async () => {
    await client.create('/ops-w', 'a');
    const seen: WatchEvent[] = [];
    const both = deferred<void>();
    const watch = (event: WatchEvent): void => {
      seen.push(event);
      if (seen.length === 2) both.resolve();
    };
    await client.getData('/ops-w', { watch });
    await client.getData('/ops-w', { watch: (e) => watch(e) });
    await client.setData('/ops-w', 'b');
    await both.promise;
    await client.setData('/ops-w', 'c');
    await client.sync('/');
    assert.deepEqual(seen, [
      { type: 'dataChanged', path: '/ops-w' },
      { type: 'dataChanged', path: '/ops-w' },
    ]);
  });

  it('answers exists on a missing node with null without building an error (an expected outcome, not a failure)', async (t) => {
    const fromServer = t.mock.method(ZooKeeperError, 'fromServer');
    assert.equal(await client.exists('/ops-never'), null);
    assert.equal(await client.exists('/ops-never', { watch: () => undefined }), null);
    assert.equal(fromServer.mock.callCount(), 0);
    fromServer.mock.restore();
    await assert.rejects(client.getData('/ops-never'), (error: unknown) => error instanceof ZooKeeperError && error.code === 'NONODE' && error.path === '/ops-never');
  });

  it('fires exists watches on creation and child watches on a new child', async () => {
    const created = deferred<WatchEvent>();
    assert.equal(await client.exists('/ops-later', { watch: created.resolve }), null);
    await client.create('/ops-later');
    assert.deepEqual(await created.promise, { type: 'created', path: '/ops-later' });

    const child = deferred<WatchEvent>();
    await client.getChildren('/ops-later', { watch: child.resolve });
    await client.create('/ops-later/kid');
    assert.deepEqual(await child.promise, { type: 'childrenChanged', path: '/ops-later' });

    const deleted = deferred<WatchEvent>();
    await client.getData('/ops-later/kid', { watch: deleted.resolve });
    await client.delete('/ops-later/kid');
    assert.deepEqual(await deleted.promise, { type: 'deleted', path: '/ops-later/kid' });
  });

  it('removes a watcher on the server so it never fires', async () => {
    await client.create('/ops-rw');
    const watcher = removedWatcher();
    await client.getData('/ops-rw', { watch: watcher });
    await client.removeWatcher('/ops-rw', watcher);
    await client.setData('/ops-rw', 'x');
    await client.sync('/');
    assert.deepEqual(watcher.removals, ['dataWatchRemoved /ops-rw'], 'told of its removal, and of nothing after it');
  });

  it('streams persistent and recursive watch events until removed', async () => {
    await client.create('/ops-pw');
    await client.create('/ops-pw2');
    const recursive = await client.addWatch('/ops-pw', { recursive: true });
    await assert.rejects(client.addWatch('/ops-pw'), { code: 'INVALID_ARGUMENT', path: '/ops-pw' });
    const persistent = await client.addWatch('/ops-pw2');
    const shallow: WatchEvent[] = [];
    persistent.on((e) => shallow.push(e));
    const events: WatchEvent[] = [];
    const collected = (async () => {
      for await (const event of recursive) {
        events.push(event);
        if (events.length === 4) break;
      }
    })();
    for (const root of ['/ops-pw', '/ops-pw2']) {
      await client.create(`${root}/a`);
      await client.setData(`${root}/a`, '1');
      await client.setData(root, '2');
      await client.delete(`${root}/a`);
    }
    await collected;
    assert.deepEqual(events, [
      { type: 'created', path: '/ops-pw/a' },
      { type: 'dataChanged', path: '/ops-pw/a' },
      { type: 'dataChanged', path: '/ops-pw' },
      { type: 'deleted', path: '/ops-pw/a' },
    ]);
    assert.equal(recursive.active, false, 'leaving the loop removes the watch');
    assert.deepEqual(
      shallow.map((e) => e.type),
      ['childrenChanged', 'dataChanged', 'childrenChanged'],
    );
    await persistent.remove();
    await client.setData('/ops-pw2', '3');
    await client.sync('/');
    assert.equal(shallow.length, 3);
  });

  it('validates paths before sending anything, even without a connection', async () => {
    const offline = new ZooKeeperClient('127.0.0.1:1', { requestTimeout: 60_000 });
    try {
      for (const bad of ['', 'relative', '/trailing/', '/a//b', '/a/./b', '/a/../b', '/nul\u0000', '/ctl\u0007']) {
        await assert.rejects(offline.getData(bad), { code: 'INVALID_PATH', op: 'getData' }, JSON.stringify(bad));
      }
      await assert.rejects(offline.create('/x', '', { mode: 'PERSISTENT_WITH_TTL' }), { code: 'INVALID_ARGUMENT' });
      await assert.rejects(offline.create('/x', '', { ttl: 5 }), { code: 'INVALID_ARGUMENT' });
      await assert.rejects(offline.multi([]), { code: 'INVALID_ARGUMENT' });
    } finally {
      await offline.close();
    }
    await client.create('/ops-seq-parent');
    const { path } = await client.create('/ops-seq-parent/', '', { mode: 'PERSISTENT_SEQUENTIAL' });
    assert.match(path, /^\/ops-seq-parent\/\d{10}$/, 'a sequential create may end in /');
  });

  it('refuses data larger than maxRequestBytes with DATA_TOO_LARGE and keeps the session', async () => {
    await assert.rejects(client.create('/ops-big', Buffer.alloc(1_048_576)), {
      code: 'DATA_TOO_LARGE',
      path: '/ops-big',
      message: /request of 10\d{5} bytes exceeds maxRequestBytes \(1048575\)/,
    });
    assert.equal(client.state, 'connected');
    assert.equal(await client.exists('/ops-big'), null);
  });

  it('maps paths through a chroot both ways, events included', async () => {
    await client.create('/ops-app');
    const rooted = await ZooKeeperClient.connect(`${server.connectString}/ops-app`);
    try {
      const created = await rooted.create('/x', 'in-chroot');
      assert.equal(created.path, '/x');
      assert.equal((await client.getData('/ops-app/x')).data.toString(), 'in-chroot');
      const seq = await rooted.create('/x/s-', '', { mode: 'EPHEMERAL_SEQUENTIAL' });
      assert.match(seq.path, /^\/x\/s-\d{10}$/);
      assert.deepEqual((await rooted.getChildren('/')).children, ['x']);
      const event = deferred<WatchEvent>();
      await rooted.getData('/x', { watch: event.resolve });
      await client.setData('/ops-app/x', 'changed');
      assert.deepEqual(await event.promise, { type: 'dataChanged', path: '/x' });
      const [tx] = await rooted.multi([{ op: 'create', path: '/y' }]);
      assert.equal(tx?.op === 'create' && tx.path, '/y');
      assert.deepEqual(await rooted.getEphemerals('/'), [seq.path]);
    } finally {
      await rooted.close();
    }
  });

  it('uses the open ACL by default', async () => {
    await client.create('/ops-open');
    assert.deepEqual((await client.getACL('/ops-open')).acl, [...OPEN_ACL_UNSAFE]);
  });
});
