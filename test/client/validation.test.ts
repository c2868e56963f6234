import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RequestMessage, ZooKeeperError } from '../../src/index.js';
import { ZooKeeperClient, requestChannel } from '../../src/index.js';
import { serverFixture } from '../support/server-fixture.js';

const ROOT = '/validation';
const NODE = `${ROOT}/existing`;
const WORLD = { scheme: 'world', id: 'anyone' };

/** A call that must fail at once, before anything is sent: the code, the op and the argument its message names. */
interface BadCall {
  op: string;
  names: string;
  code?: 'INVALID_ARGUMENT' | 'INVALID_PATH';
  call: (client: ZooKeeperClient) => Promise<unknown>;
}

// JavaScript callers pass anything: each case is what the types would refuse, written as such.
const any = <T>(value: unknown): T => value as T;

const BAD_CALLS: BadCall[] = [
  { op: 'create', names: 'mode', call: (c) => c.create(`${ROOT}/typo`, '', { mode: any('EPHEMERAL_SEQ') }) },
  { op: 'create', names: 'mode', call: (c) => c.create(`${ROOT}/typo`, '', { mode: any(1) }) },
  { op: 'create', names: 'mode', call: (c) => c.create(`${ROOT}/typo`, '', { mode: any('toString') }) },
  { op: 'create', names: 'ttl', call: (c) => c.create(`${ROOT}/ttl`, '', { mode: 'PERSISTENT_WITH_TTL', ttl: 0.5 }) },
  { op: 'create', names: 'ttl', call: (c) => c.create(`${ROOT}/ttl`, '', { mode: 'PERSISTENT_WITH_TTL', ttl: NaN }) },
  { op: 'create', names: 'ttl', call: (c) => c.create(`${ROOT}/ttl`, '', { mode: 'PERSISTENT_WITH_TTL', ttl: 2 ** 40 }) },
  { op: 'create', names: 'ttl', call: (c) => c.create(`${ROOT}/ttl`, '', { mode: 'PERSISTENT', ttl: 1000 }) },
  { op: 'create', names: 'acl', call: (c) => c.create(`${ROOT}/acl`, '', { acl: [] }) },
  { op: 'create', names: 'acl', call: (c) => c.create(`${ROOT}/acl`, '', { acl: any('open') }) },
  { op: 'create', names: 'perms', call: (c) => c.create(`${ROOT}/acl`, '', { acl: [{ perms: 2 ** 32, id: WORLD }] }) },
  { op: 'create', names: 'perms', call: (c) => c.create(`${ROOT}/acl`, '', { acl: [{ perms: 32, id: WORLD }] }) },
  { op: 'create', names: 'perms', call: (c) => c.create(`${ROOT}/acl`, '', { acl: [{ perms: 1.5, id: WORLD }] }) },
  { op: 'create', names: 'acl[0].id', call: (c) => c.create(`${ROOT}/acl`, '', { acl: [{ perms: 31, id: any({ scheme: 1, id: 'anyone' }) }] }) },
  { op: 'create', names: 'acl[0]', call: (c) => c.create(`${ROOT}/acl`, '', { acl: [any(null)] }) },
  { op: 'create', names: 'data', call: (c) => c.create(`${ROOT}/data`, any(42)) },
  { op: 'create', names: 'data', call: (c) => c.create(`${ROOT}/data`, any({})) },
  { op: 'create', names: 'options', call: (c) => c.create(`${ROOT}/opts`, '', any(null)) },
  { op: 'create', names: 'timeout', call: (c) => c.create(`${ROOT}/t`, '', { timeout: 0 }) },
  { op: 'create', names: 'signal', call: (c) => c.create(`${ROOT}/s`, '', { signal: any('stop') }) },
  { op: 'create', code: 'INVALID_PATH', names: 'relative', call: (c) => c.create('relative') },
  { op: 'delete', names: 'version', call: (c) => c.delete(NODE, { version: 2 ** 31 }) },
  { op: 'delete', names: 'version', call: (c) => c.delete(NODE, { version: NaN }) },
  { op: 'delete', names: 'version', call: (c) => c.delete(NODE, { version: 0.5 }) },
  { op: 'delete', names: 'version', call: (c) => c.delete(NODE, { version: -2 }) },
  { op: 'delete', names: 'version', call: (c) => c.delete(NODE, { version: any('0') }) },
  { op: 'setData', names: 'version', call: (c) => c.setData(NODE, 'x', { version: 2 ** 31 }) },
  { op: 'setData', names: 'version', call: (c) => c.setData(NODE, 'x', { version: NaN }) },
  { op: 'setData', names: 'data', call: (c) => c.setData(NODE, any(42)) },
  { op: 'setData', names: 'data', call: (c) => c.setData(NODE, any([1, 2])) },
  { op: 'exists', names: 'watch', call: (c) => c.exists(NODE, { watch: any('callback') }) },
  { op: 'getData', names: 'watch', call: (c) => c.getData(NODE, { watch: any(true) }) },
  { op: 'getData', names: 'timeout', call: (c) => c.getData(NODE, { timeout: NaN }) },
  { op: 'getChildren', names: 'watch', call: (c) => c.getChildren(ROOT, { watch: any({}) }) },
  { op: 'getChildren', names: 'options', call: (c) => c.getChildren(ROOT, any(7)) },
  { op: 'getACL', names: 'timeout', call: (c) => c.getACL(NODE, { timeout: -1 }) },
  { op: 'setACL', names: 'perms', call: (c) => c.setACL(NODE, [{ perms: 2 ** 32, id: WORLD }]) },
  { op: 'setACL', names: 'acl', call: (c) => c.setACL(NODE, any(undefined)) },
  { op: 'setACL', names: 'version', call: (c) => c.setACL(NODE, [{ perms: 31, id: WORLD }], { version: NaN }) },
  { op: 'sync', code: 'INVALID_PATH', names: 'not a string', call: (c) => c.sync(any(5)) },
  { op: 'multi', names: 'ops', call: (c) => c.multi(any('create')) },
  { op: 'multi', names: 'ops[0]', call: (c) => c.multi([any(null)]) },
  { op: 'multi', names: 'ops[1].op', call: (c) => c.multi([{ op: 'create', path: `${ROOT}/m1` }, any({ op: 'exists', path: NODE })]) },
  { op: 'multi', names: 'ops[0].mode', call: (c) => c.multi([{ op: 'create', path: `${ROOT}/m2`, mode: any('EPHEMERAL_SEQ') }]) },
  { op: 'multi', names: 'ops[0].ttl', call: (c) => c.multi([{ op: 'create', path: `${ROOT}/m3`, ttl: 1000 }]) },
  { op: 'multi', names: 'ops[0].ttl', call: (c) => c.multi([{ op: 'create', path: `${ROOT}/m3`, mode: 'PERSISTENT_WITH_TTL', ttl: 0.5 }]) },
  { op: 'multi', names: 'ops[0].acl[0].perms', call: (c) => c.multi([{ op: 'create', path: `${ROOT}/m4`, acl: [{ perms: 2 ** 32, id: WORLD }] }]) },
  { op: 'multi', names: 'ops[0].data', call: (c) => c.multi([{ op: 'create', path: `${ROOT}/m5`, data: any(42) }]) },
  { op: 'multi', names: 'ops[1].version', call: (c) => c.multi([{ op: 'create', path: `${ROOT}/m6` }, { op: 'delete', path: NODE, version: NaN }]) },
  { op: 'multi', names: 'ops[1].version', call: (c) => c.multi([{ op: 'create', path: `${ROOT}/m7` }, any({ op: 'check', path: NODE })]) },
  { op: 'multi', names: 'ops[1].version', call: (c) => c.multi([{ op: 'create', path: `${ROOT}/m8` }, { op: 'setData', path: NODE, data: 'x', version: 2 ** 31 }]) },
  { op: 'multi', code: 'INVALID_PATH', names: 'relative', call: (c) => c.multi([{ op: 'create', path: `${ROOT}/m9` }, { op: 'delete', path: 'relative' }]) },
  { op: 'multiRead', names: 'ops', call: (c) => c.multiRead(any(undefined)) },
  { op: 'multiRead', names: 'ops[0].type', call: (c) => c.multiRead([any({ type: 'exists', path: NODE })]) },
  { op: 'multiRead', names: 'ops[1]', call: (c) => c.multiRead([{ type: 'getData', path: NODE }, any('x')]) },
  { op: 'multiRead', code: 'INVALID_PATH', names: 'relative', call: (c) => c.multiRead([{ type: 'getChildren', path: 'relative' }]) },
  { op: 'addWatch', names: 'recursive', call: (c) => c.addWatch(ROOT, { recursive: any('yes') }) },
  { op: 'addWatch', names: 'maxBuffered', call: (c) => c.addWatch(ROOT, { maxBuffered: 0 }) },
  { op: 'removeWatcher', names: 'watcher', call: (c) => c.removeWatcher(ROOT, any('watcher')) },
  { op: 'removeAllWatches', names: 'type', call: (c) => c.removeAllWatches(ROOT, any('persistent')) },
  { op: 'checkWatches', names: 'type', call: (c) => c.checkWatches(ROOT, any(2)) },
  { op: 'whoAmI', names: 'timeout', call: (c) => c.whoAmI({ timeout: 0 }) },
  { op: 'getConfig', names: 'watch', call: (c) => c.getConfig({ watch: any('callback') }) },
  { op: 'getEphemerals', code: 'INVALID_PATH', names: 'not a string', call: (c) => c.getEphemerals(any(5)) },
  { op: 'getAllChildrenNumber', names: 'timeout', call: (c) => c.getAllChildrenNumber(ROOT, { timeout: Infinity }) },
  { op: 'ensurePath', names: 'container', call: (c) => c.ensurePath(`${ROOT}/e/f`, { container: any('yes') }) },
  { op: 'ensurePath', names: 'perms', call: (c) => c.ensurePath(`${ROOT}/e/f`, { acl: [{ perms: -1, id: WORLD }] }) },
  { op: 'addAuth', names: 'scheme', call: (c) => c.addAuth(any(5), 'user:pass') },
  { op: 'addAuth', names: 'auth', call: (c) => c.addAuth('digest', any(5)) },
  { op: 'waitForConnected', names: 'session', call: (c) => c.waitForConnected({ session: any(5) }) },
];

describe('every public argument is checked at the call, before anything is sent', () => {
  const zk = serverFixture();

  it('a bad argument of each public method rejects with a typed error naming it, sends nothing and changes nothing', async () => {
    const { client } = zk;
    await client.create(ROOT);
    const before = (await client.create(NODE, 'kept')).stat;
    const sent: string[] = [];
    const onStart = (message: RequestMessage): void => {
      sent.push(`${message.op} ${message.path ?? ''}`);
    };
    requestChannel.start.subscribe(onStart as (message: unknown) => void);
    const failures: string[] = [];
    try {
      for (const [i, bad] of BAD_CALLS.entries()) {
        const label = `#${i} ${bad.op} (${bad.names})`;
        let outcome: unknown;
        try {
          // A synchronous throw would escape a caller's .catch: the promise must reject.
          outcome = await bad.call(client).then((value) => ({ resolved: value }));
        } catch (error) {
          outcome = error;
        }
        const error = outcome as { name?: string; code?: string; op?: string; message?: string };
        if (error?.name !== 'ZooKeeperError' || error.code !== (bad.code ?? 'INVALID_ARGUMENT') || error.op !== bad.op || !error.message?.includes(bad.names)) {
          failures.push(`${label}: ${outcome instanceof Error ? `${outcome.name} ${outcome.message}` : JSON.stringify(outcome, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`);
        }
      }
    } finally {
      requestChannel.start.unsubscribe(onStart as (message: unknown) => void);
    }
    assert.deepEqual(failures, [], 'each bad call fails with its typed error');
    assert.deepEqual(sent, [], 'no request was sent for a bad call');
    // Checked by the server's word: nothing was created, the node kept its data, version and ACL.
    assert.deepEqual((await client.getChildren(ROOT)).children, ['existing']);
    const after = await client.getData(NODE);
    assert.equal(after.data.toString(), 'kept');
    assert.equal(after.stat.mzxid, before.mzxid);
    assert.equal(after.stat.aversion, before.aversion);
    assert.equal(client.state, 'connected');
  });

  it('a bad client option throws INVALID_ARGUMENT naming it, instead of a client that silently lacks it', async () => {
    const bad: [string, unknown][] = [
      ['options', null],
      ['auth', { auth: 'digest' }],
      ['auth[0]', { auth: [null] }],
      ['auth[0].scheme', { auth: [{ scheme: 5, auth: 'u:p' }] }],
      ['auth[0].scheme', { auth: [{ scheme: '', auth: 'u:p' }] }],
      ['auth[1].auth', { auth: [{ scheme: 'digest', auth: 'u:p' }, { scheme: 'digest', auth: 5 }] }],
      ['readOnly', { readOnly: 'yes' }],
      ['renewExpiredSession', { renewExpiredSession: 0 }],
      // Spread into tls.connect as nothing: the client spoke TLS with Node's defaults, as if asked for `true`.
      ['tls', { tls: 5 }],
      ['tls', { tls: 'yes' }],
    ];
    const failures: string[] = [];
    for (const [names, options] of bad) {
      try {
        const client = new ZooKeeperClient(zk.server.connectString, any(options));
        await client.close();
        failures.push(`${names}: constructed`);
      } catch (error) {
        const { code, message } = error as ZooKeeperError;
        if (code !== 'INVALID_ARGUMENT' || !message.includes(names)) failures.push(`${names}: ${String(error)}`);
      }
    }
    assert.deepEqual(failures, []);
  });

  it('a bad connect string or state listener throws INVALID_ARGUMENT naming it, instead of a TypeError now or an uncaught one at the next state change', async () => {
    const failures: string[] = [];
    const expect = (names: string, call: () => unknown): void => {
      try {
        const made = call();
        if (made instanceof ZooKeeperClient) void made.close();
        failures.push(`${names}: accepted`);
      } catch (error) {
        const { name, code, message } = error as ZooKeeperError;
        if (name !== 'ZooKeeperError' || code !== 'INVALID_ARGUMENT' || !message.includes(names)) failures.push(`${names}: ${String(error)}`);
      }
    };
    expect('connectString', () => new ZooKeeperClient(any(5)));
    expect('connectString', () => new ZooKeeperClient(any(undefined)));
    // A host no resolver can find, refused at once: accepted, each failed only after the whole connect timeout (ENOTFOUND).
    for (const bad of ['bad string', 'a b c:2181', '127.0.0.1:2181,other host:2181', '[::1 ]:2181', 'host\t:2181', 'ho$t:2181']) {
      expect(`bad host`, () => new ZooKeeperClient(bad));
    }
    const client = new ZooKeeperClient(zk.server.connectString);
    try {
      // Accepted, a listener that is no function threw an uncaught TypeError from the client's close() below.
      expect('listener', () => client.onState(any('listener')));
      expect('options', () => client.states(any(5)));
      expect('signal', () => client.states({ signal: any({}) }));
    } finally {
      await client.close();
    }
    assert.deepEqual(failures, []);
  });
});

