import assert from 'node:assert/strict';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { OPEN_ACL_UNSAFE, ZooKeeperClient, isZooKeeperError } from '../../src/index.js';
import { EMPTY_PASSWORD, FrameDecoder, OpCode, Reader, Writer, Xid, readConnectResponse, readData, readReplyHeader, writeConnectRequest, writeCreate, writePathWatch, writeRequestHeader } from '../../src/protocol/index.js';
import { FaultProxy, OPCODES_SINCE_ZOOKEEPER_36, asZooKeeper35, fourLetterWord } from '../../src/testing/index.js';
import type { ProxyRequest, RequestVerdict } from '../../src/testing/index.js';
import { ROUND_TRIPS_MS } from '../support/bounds.js';
import { serverFixture } from '../support/server-fixture.js';
import { serverWatches } from '../support/server-watches.js';
import { eventually } from '../support/wait.js';

const ADD_WATCH = 106;
/** create2: what the client sends for a create (the reply carries the Stat). */
const CREATE2 = 15;
const UNIMPLEMENTED = -6;

describe('FaultProxy onRequest, against a real server', { timeout: 6 * ROUND_TRIPS_MS }, () => {
  const zk = serverFixture();
  const closing: { close(): Promise<void> }[] = [];
  after(async () => {
    for (const c of closing.reverse()) await c.close();
  });

  async function through(decide: (opcode: number) => RequestVerdict): Promise<{ proxy: FaultProxy; client: ZooKeeperClient }> {
    const proxy = await FaultProxy.start({ targetPort: zk.server.port, onRequest: ({ opcode }) => decide(opcode) });
    closing.push(proxy);
    const client = await ZooKeeperClient.connect(proxy.connectString, { sessionTimeout: 4000 });
    closing.push(client);
    return { proxy, client };
  }

  it('answers an operation with an error and closes, as a 3.5 server does with addWatch; the session and other requests go on', async () => {
    const { proxy, client } = await through((opcode) => (opcode === ADD_WATCH ? { error: UNIMPLEMENTED, close: true } : 'forward'));
    const session = client.sessionId;
    await client.create('/proxy-requests-before', 'x');
    await assert.rejects(client.addWatch('/', { recursive: true }), (error: unknown) => isZooKeeperError(error, 'UNIMPLEMENTED'));
    // The connection closed after the answer: the client is on a second one, same session.
    await eventually(() => proxy.stats().totalConnections >= 2, ROUND_TRIPS_MS, 'a second connection');
    await client.waitForConnected({ timeout: ROUND_TRIPS_MS });
    assert.equal(client.sessionId, session);
    assert.equal((await client.getData('/proxy-requests-before')).data.toString(), 'x');
    // The server never got the watch: its own list has none for this session.
    assert.deepEqual(await serverWatches(zk.server, session), []);
  });

  it('plays ZooKeeper 3.5 (asZooKeeper35): every operation of 3.6+ the client sends, a watch re-registration with persistent watches included, is UNIMPLEMENTED and closes the connection; the session lives on', async () => {
    let old = false;
    const refused: number[] = [];
    const standIn = asZooKeeper35();
    const proxy = await FaultProxy.start({
      targetPort: zk.server.port,
      onRequest: (request) => {
        if (!old) return 'forward';
        const verdict = standIn(request);
        if (verdict !== 'forward') refused.push(request.opcode);
        return verdict;
      },
    });
    closing.push(proxy);
    const client = await ZooKeeperClient.connect(proxy.connectString, { sessionTimeout: 4000 });
    closing.push(client);
    const session = client.sessionId;
    // Set while the server is itself: after a reconnect the client re-registers it with setWatches2 (105).
    const persistent = await client.addWatch('/');
    old = true;
    proxy.resetAll();
    await eventually(() => refused.includes(OpCode.setWatches2), ROUND_TRIPS_MS, 'the re-registration with a persistent watch refused');
    await persistent.remove().catch(() => undefined);
    const operations: [number, () => Promise<unknown>][] = [
      [OpCode.multiRead, () => client.multiRead([{ type: 'getData', path: '/' }])],
      [OpCode.getEphemerals, () => client.getEphemerals('/')],
      [OpCode.getAllChildrenNumber, () => client.getAllChildrenNumber('/')],
      [OpCode.addWatch, () => client.addWatch('/proxy-requests-35', { recursive: true })],
    ];
    for (const [opcode, call] of operations) {
      await client.waitForConnected({ timeout: ROUND_TRIPS_MS });
      const connections = proxy.stats().totalConnections;
      await assert.rejects(call(), (error: unknown) => isZooKeeperError(error, 'UNIMPLEMENTED'), `opcode ${opcode}`);
      await eventually(() => proxy.stats().totalConnections > connections, ROUND_TRIPS_MS, `a new connection after opcode ${opcode}`);
    }
    await client.waitForConnected({ timeout: ROUND_TRIPS_MS });
    assert.equal(client.sessionId, session, 'the same session throughout');
    assert.ok(await client.exists('/'), 'what 3.5 knows goes on');
    assert.deepEqual([...new Set(refused)].sort((a, b) => a - b), [...OPCODES_SINCE_ZOOKEEPER_36].filter((op) => op !== OpCode.whoAmI), 'each refused (the client has no whoAmI)');
  });

  it('resets the connection with the request in flight: the server never sees it', async () => {
    let refuse = true;
    const { proxy, client } = await through((opcode) => (opcode === CREATE2 && refuse ? 'reset' : 'forward'));
    await assert.rejects(client.create('/proxy-requests-reset', ''), (error: unknown) => isZooKeeperError(error, 'CONNECTIONLOSS'));
    refuse = false;
    await client.waitForConnected({ timeout: ROUND_TRIPS_MS });
    assert.equal(await zk.client.exists('/proxy-requests-reset'), null, 'the create never reached the server');
    await client.create('/proxy-requests-reset', '');
    assert.ok(await zk.client.exists('/proxy-requests-reset'));
    assert.ok(proxy.stats().totalConnections >= 2);
  });

  it('loses the reply of a request the server ran: the client sees CONNECTIONLOSS, the node exists', async () => {
    let lose = true;
    const { client } = await through((opcode) => (opcode === CREATE2 && lose ? 'lose-reply' : 'forward'));
    await assert.rejects(client.create('/proxy-requests-lost-reply', ''), (error: unknown) => isZooKeeperError(error, 'CONNECTIONLOSS'));
    lose = false;
    assert.ok(await zk.client.exists('/proxy-requests-lost-reply'), 'the server ran the create');
    await client.waitForConnected({ timeout: ROUND_TRIPS_MS });
    await assert.rejects(client.create('/proxy-requests-lost-reply', ''), (error: unknown) => isZooKeeperError(error, 'NODEEXISTS'));
  });

  it('drops a request and all after it on a connection that stays open: the server sees none, the client times out its read', async () => {
    let drop = true;
    const { proxy, client } = await through((opcode) => (opcode === CREATE2 && drop ? 'drop' : 'forward'));
    await assert.rejects(client.create('/proxy-requests-dropped', ''), (error: unknown) => isZooKeeperError(error, 'CONNECTIONLOSS'));
    drop = false;
    assert.equal(await zk.client.exists('/proxy-requests-dropped'), null, 'the create never reached the server');
    await client.waitForConnected({ timeout: ROUND_TRIPS_MS });
    assert.equal(proxy.stats().totalConnections, 2, 'the client gave up the silent connection and made a new one');
    await client.create('/proxy-requests-dropped', '');
  });

  it('delays a request and those behind it, in order', async () => {
    const DELAY = 600;
    let delayed = false;
    const { client } = await through((opcode) => (opcode === CREATE2 && !delayed ? ((delayed = true), { delay: DELAY }) : 'forward'));
    const started = performance.now();
    const [first, second] = await Promise.all([client.create('/proxy-requests-delayed-1', ''), client.create('/proxy-requests-delayed-2', '')]);
    assert.ok(performance.now() - started >= DELAY - 20, `answered after the delay (${Math.round(performance.now() - started)} ms)`);
    assert.ok(first.stat.czxid < second.stat.czxid, 'order kept');
  });

  it('delays the reply of a request the server ran at once', async () => {
    const DELAY = 600;
    let delayed = false;
    const { client } = await through((opcode) => (opcode === CREATE2 && !delayed ? ((delayed = true), { delayReply: DELAY }) : 'forward'));
    const started = performance.now();
    const creating = client.create('/proxy-requests-reply-delayed', '');
    await eventually(async () => (await zk.client.exists('/proxy-requests-reply-delayed')) !== null, ROUND_TRIPS_MS, 'the server ran the create');
    assert.ok(performance.now() - started < DELAY, 'ran before its reply came');
    await creating;
    assert.ok(performance.now() - started >= DELAY - 20, `answered after the delay (${Math.round(performance.now() - started)} ms)`);
  });

  /** A request frame: header, then `body` written by the protocol's own writers. */
  function request(xid: number, opcode: number, body?: (w: Writer) => void): Buffer {
    const w = writeRequestHeader(new Writer(), xid, opcode);
    body?.(w);
    return Buffer.from(w.frame());
  }

  /** A connection of the test's own through `proxy`, its replies split into frames by the client's decoder. */
  async function rawSession(proxy: FaultProxy): Promise<{ socket: Socket; frames: Buffer[]; send(bytes: Buffer, byteByByte: boolean): Promise<void>; frame(index: number): Promise<Buffer> }> {
    const socket = connect({ host: '127.0.0.1', port: proxy.port });
    socket.setNoDelay(true);
    socket.on('error', () => undefined);
    closing.push({ close: () => Promise.resolve(void socket.destroy()) });
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    const decoder = new FrameDecoder();
    const frames: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => {
      for (const frame of decoder.push(chunk)) if (Buffer.isBuffer(frame)) frames.push(Buffer.from(frame));
    });
    const write = (bytes: Buffer): Promise<void> => new Promise((resolve, reject) => socket.write(bytes, (error) => (error ? reject(error) : resolve())));
    return {
      socket,
      frames,
      async send(bytes, byteByByte) {
        if (!byteByByte) return write(bytes);
        // Each byte its own write (no Nagle): the proxy reads the frames in pieces as small as TCP makes them.
        for (let i = 0; i < bytes.length; i++) await write(bytes.subarray(i, i + 1));
      },
      async frame(index) {
        await eventually(() => frames.length > index, ROUND_TRIPS_MS, `reply frame ${index}`);
        return frames[index]!;
      },
    };
  }

  for (const byteByByte of [true, false]) {
    it(`frames requests written ${byteByByte ? 'one byte at a time' : 'several in one write'}: each decided once, in order, replies intact; a ping is forwarded undecided`, async () => {
      await zk.client.create('/proxy-requests-raw', 'raw').catch((error: unknown) => {
        if (!isZooKeeperError(error, 'NODEEXISTS')) throw error;
      });
      const seen: Pick<ProxyRequest, 'xid' | 'opcode'>[] = [];
      const proxy = await FaultProxy.start({
        targetPort: zk.server.port,
        onRequest: ({ xid, opcode }) => {
          seen.push({ xid, opcode });
          return 'forward';
        },
      });
      closing.push(proxy);
      const raw = await rawSession(proxy);
      const connectRequest = new Writer();
      writeConnectRequest(connectRequest, { lastZxidSeen: 0n, timeout: 4000, sessionId: 0n, password: EMPTY_PASSWORD, readOnly: false });
      await raw.send(Buffer.from(connectRequest.frame()), byteByByte);
      const session = readConnectResponse(new Reader(await raw.frame(0)));
      assert.ok(session.timeout > 0 && session.sessionId !== 0n, 'a session was granted');
      const requests = Buffer.concat([
        request(1, OpCode.getData, (w) => writePathWatch(w, '/proxy-requests-raw', false)),
        request(Xid.ping, OpCode.ping),
        request(2, OpCode.exists, (w) => writePathWatch(w, '/proxy-requests-missing', false)),
        request(3, OpCode.getData, (w) => writePathWatch(w, '/proxy-requests-raw', false)),
      ]);
      await raw.send(requests, byteByByte);
      const replies = [await raw.frame(1), await raw.frame(2), await raw.frame(3), await raw.frame(4)].map((frame) => {
        const reader = new Reader(frame);
        const header = readReplyHeader(reader);
        // getData (xids 1 and 3) answers with the data; ping and exists are read no further.
        return { xid: header.xid, err: header.err, data: header.xid === 1 || header.xid === 3 ? readData(reader).data?.toString() : undefined };
      });
      assert.deepEqual(replies, [
        { xid: 1, err: 0, data: 'raw' },
        { xid: Xid.ping, err: 0, data: undefined },
        // NONODE: exists of a missing node answers with that error and no body.
        { xid: 2, err: -101, data: undefined },
        { xid: 3, err: 0, data: 'raw' },
      ]);
      assert.deepEqual(seen, [
        { xid: 1, opcode: OpCode.getData },
        { xid: 2, opcode: OpCode.exists },
        { xid: 3, opcode: OpCode.getData },
      ], 'each request decided once, the ping not at all');
    });
  }

  it('after a reset, the rest of the same write is neither decided nor sent on', async () => {
    const seen: number[] = [];
    const proxy = await FaultProxy.start({
      targetPort: zk.server.port,
      onRequest: ({ xid }) => {
        seen.push(xid);
        return xid === 2 ? 'reset' : 'forward';
      },
    });
    closing.push(proxy);
    const raw = await rawSession(proxy);
    const connectRequest = new Writer();
    writeConnectRequest(connectRequest, { lastZxidSeen: 0n, timeout: 4000, sessionId: 0n, password: EMPTY_PASSWORD, readOnly: false });
    await raw.send(Buffer.from(connectRequest.frame()), false);
    await raw.frame(0);
    const closed = new Promise<void>((resolve) => raw.socket.once('close', () => resolve()));
    const create = request(3, OpCode.create, (w) => writeCreate(w, { path: '/proxy-requests-after-reset', data: null, acl: OPEN_ACL_UNSAFE, flags: 0 }));
    await raw.send(Buffer.concat([request(1, OpCode.exists, (w) => writePathWatch(w, '/', false)), request(2, OpCode.exists, (w) => writePathWatch(w, '/', false)), create]), false);
    await closed;
    assert.deepEqual(seen, [1, 2], 'nothing after the reset was put to the decider');
    assert.equal(await zk.client.exists('/proxy-requests-after-reset'), null, 'the create after the reset never reached the server');
  });

  it('passes a four-letter word through untouched, undecided', async () => {
    let asked = 0;
    const proxy = await FaultProxy.start({
      targetPort: zk.server.port,
      onRequest: () => {
        asked++;
        return { error: -6 };
      },
    });
    closing.push(proxy);
    assert.equal(await fourLetterWord(proxy.port, 'ruok'), 'imok');
    assert.equal(asked, 0);
  });
});
