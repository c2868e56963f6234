import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Layout, QueueLock } from '../../src/index.js';
import { Mutex, ReadWriteLock, ZooKeeperClient } from '../../src/index.js';
import { ZooKeeperServer } from '../../src/testing/index.js';
import { sharedNow } from './fixtures.js';

/** Debian's python3-kazoo lives in the system interpreter, not in a pyenv one that may come first on PATH. */
const PYTHON = '/usr/bin/python3';
const WORKER = fileURLToPath(new URL('./fixtures/kazoo_worker.py', import.meta.url));

interface Interval {
  who: string;
  start: number;
  end: number;
  exclusive: boolean;
}

class KazooProcess {
  readonly lines: Record<string, unknown>[] = [];
  private readonly waiters: (() => void)[] = [];
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcessWithoutNullStreams;

  constructor(args: string[]) {
    this.child = spawn(PYTHON, [WORKER, ...args]);
    let stderr = '';
    this.child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      this.lines.push(JSON.parse(line) as Record<string, unknown>);
      for (const wake of this.waiters.splice(0)) wake();
    });
    this.exited = new Promise((resolve) =>
      this.child.on('exit', (code) => {
        if (code !== 0) process.stderr.write(`kazoo worker exited ${code}: ${stderr}\n`);
        for (const wake of this.waiters.splice(0)) wake();
        resolve(code);
      }),
    );
  }

  /** Resolves with the first output line that has `key`; rejects after `ms` or if the worker exits first. */
  async line(key: string, ms = 30_000): Promise<Record<string, unknown>> {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = this.lines.find((l) => key in l);
      if (found) return found;
      if (this.child.exitCode !== null) throw new Error(`kazoo worker exited before printing "${key}"`);
      if (Date.now() > deadline) throw new Error(`kazoo worker printed no "${key}" within ${ms} ms`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 200);
      });
    }
  }

  release(): void {
    this.child.stdin.write('\n');
  }

  kill(): void {
    this.child.kill('SIGKILL');
  }
}

function assertExclusion(intervals: Interval[]): void {
  const sorted = [...intervals].sort((a, b) => a.start - b.start);
  for (let i = 0; i < sorted.length; i++) {
    for (let j = i + 1; j < sorted.length && sorted[j]!.start < sorted[i]!.end; j++) {
      const [a, b] = [sorted[i]!, sorted[j]!];
      assert.ok(!a.exclusive && !b.exclusive, `${a.who} [${a.start}, ${a.end}] overlaps ${b.who} [${b.start}, ${b.end}]`);
    }
  }
}

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

  const kazoo = (path: string, ...args: string[]): KazooProcess => new KazooProcess(['--hosts', server.connectString, '--path', path, ...args]);

  async function zklockLoop(lock: QueueLock, who: string, cycles: number, exclusive: boolean): Promise<Interval[]> {
    const intervals: Interval[] = [];
    for (let i = 0; i < cycles; i++) {
      const lease = await lock.acquire({ timeout: 30_000 });
      const start = sharedNow();
      await new Promise((r) => setTimeout(r, 5));
      intervals.push({ who, start, end: sharedNow(), exclusive });
      await lease.release();
    }
    return intervals;
  }

  function kazooIntervals(worker: KazooProcess, who: string, exclusive: boolean): Interval[] {
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
      holder.release();
      assert.equal(await holder.exited, 0);

      const lease = await mutex.acquire({ timeout: 10_000 });
      const trier = kazoo(path, '--mode', 'try', ...extra);
      assert.deepEqual(await trier.line('acquired'), { acquired: false }, 'kazoo sees the zklock holder');
      await trier.exited;
      await lease.release();

      const looper = kazoo(path, '--mode', 'loop', '--cycles', '30', ...extra);
      const ours = await zklockLoop(mutex, 'zklock', 30, true);
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
    kazooReader.release();
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
    const [ourReads, ourWrites] = await Promise.all([zklockLoop(rw.readLock, 'zklock-read', 25, false), zklockLoop(rw.writeLock, 'zklock-write', 15, true)]);
    assert.equal(await writers.exited, 0);
    assertExclusion([...ourReads, ...ourWrites, ...kazooIntervals(writers, 'kazoo-write', true)]);
    assert.deepEqual((await client.getChildren(path)).children, []);
  });
});
