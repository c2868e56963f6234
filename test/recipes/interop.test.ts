import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Layout } from '../../src/index.js';
import { Mutex, ReadWriteLock, ZooKeeperClient } from '../../src/index.js';
import { ZooKeeperServer } from '../../src/testing/index.js';
import type { HoldInterval as Interval } from '../support/intervals.js';
import { assertExclusion } from '../support/intervals.js';
import { JsonLineProcess } from '../support/json-line-process.js';
import { holdLoop } from './fixtures.js';

/** Debian's python3-kazoo lives in the system interpreter, not in a pyenv one that may come first on PATH. */
const PYTHON = '/usr/bin/python3';
const WORKER = fileURLToPath(new URL('./fixtures/kazoo_worker.py', import.meta.url));

describe('interop with kazoo on the same lock path', { timeout: 120_000 }, () => {
  let server: ZooKeeperServer;
  let client: ZooKeeperClient;

  before(async () => {
    server = await ZooKeeperServer.start();
    client = await ZooKeeperClient.connect(server.connectString);
  });
  after(async () => {
    await client?.close();
    await server?.close();
  });

  const kazoo = (path: string, ...args: string[]): JsonLineProcess => new JsonLineProcess('kazoo worker', PYTHON, [WORKER, '--hosts', server.connectString, '--path', path, ...args]);

  function kazooIntervals(worker: JsonLineProcess, who: string, exclusive: boolean): Interval[] {
    return worker.lines.filter((l) => 'start' in l).map((l) => ({ who, start: l.start as number, end: l.end as number, exclusive }));
  }

  for (const layout of ['curator', 'kazoo'] as const satisfies readonly Layout[]) {
    it(`mutex (${layout} names): each side sees the other's holder, and concurrent loops never overlap`, async () => {
      const path = `/interop-mutex-${layout}`;
      // kazoo >= 2.7.1 recognises other names through extra_lock_patterns.
      const extra = layout === 'curator' ? ['--extra=-lock-'] : [];
      const mutex = new Mutex(client, path, { layout });

      const holder = kazoo(path, '--mode', 'hold', ...extra);
      await holder.line('held');
      assert.equal(await mutex.tryAcquire(), null, 'zklock sees the kazoo holder');
      holder.send(''); // a line on stdin releases it
      assert.equal(await holder.exited, 0);

      const lease = await mutex.acquire({ timeout: 10_000 });
      const trier = kazoo(path, '--mode', 'try', ...extra);
      assert.deepEqual(await trier.line('acquired'), { acquired: false }, 'kazoo sees the zklock holder');
      await trier.exited;
      await lease.release();

      const looper = kazoo(path, '--mode', 'loop', '--cycles', '30', ...extra);
      const ours = await holdLoop(mutex, 'zklock', 30, true);
      assert.equal(await looper.exited, 0);
      const theirs = kazooIntervals(looper, 'kazoo', true);
      assert.equal(theirs.length, 30);
      assertExclusion([...ours, ...theirs]);
      assert.deepEqual((await client.getChildren(path)).children, []);
    });
  }

  it('read/write lock (kazoo names): readers share with kazoo readers, writers exclude everyone, both ways; loops with kazoo writers never overlap', async () => {
    const path = '/interop-rw';
    const rw = new ReadWriteLock(client, path, { layout: 'kazoo' });

    const kazooReader = kazoo(path, '--kind', 'read', '--mode', 'hold');
    await kazooReader.line('held');
    const ourRead = await rw.readLock.tryAcquire();
    assert.ok(ourRead, 'a zklock reader shares with a kazoo reader');
    assert.equal(await rw.writeLock.tryAcquire(), null, 'a zklock writer waits for the kazoo reader');
    kazooReader.send('');
    await kazooReader.exited;
    await ourRead.release();

    const ourWrite = await rw.writeLock.acquire({ timeout: 10_000 });
    for (const kind of ['read', 'write']) {
      const trier = kazoo(path, '--kind', kind, '--mode', 'try');
      assert.deepEqual(await trier.line('acquired'), { acquired: false }, `a kazoo ${kind}er waits for the zklock writer`);
      await trier.exited;
    }
    await ourWrite.release();

    // No looping kazoo reader: kazoo 2.8's ReadLock waits for the last writer of the whole queue,
    // even one queued after it, so it deadlocks with any writer behind it (kazoo's own included).
    const writers = kazoo(path, '--kind', 'write', '--mode', 'loop', '--cycles', '15');
    const [ourReads, ourWrites] = await Promise.all([holdLoop(rw.readLock, 'zklock-read', 25, false), holdLoop(rw.writeLock, 'zklock-write', 15, true)]);
    assert.equal(await writers.exited, 0);
    assertExclusion([...ourReads, ...ourWrites, ...kazooIntervals(writers, 'kazoo-write', true)]);
    assert.deepEqual((await client.getChildren(path)).children, []);
  });
});
