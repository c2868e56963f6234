import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { Mutex, Semaphore, ZooKeeperClient } from '../../src/index.js';
import { ZooKeeperServer } from '../../src/testing/index.js';
import { ROUND_TRIPS_MS } from '../support/bounds.js';
import { eventually } from '../support/wait.js';
import { HOLD, LONG_HOLD_MS, endHolds, intervals, maxConcurrency, readEvents, runCli, startCli, waitForEvents } from './helpers/cli.js';

describe('zklock exec', () => {
  let server: ZooKeeperServer;
  let client: ZooKeeperClient;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    server = await ZooKeeperServer.start();
    client = await ZooKeeperClient.connect(server.connectString);
    dir = mkdtempSync(join(tmpdir(), 'zklock-cli-'));
    env = { ZOOKEEPER_CONNECT: server.connectString };
  });

  after(async () => {
    await client?.close();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const logFile = (name: string): string => join(dir, `${name}.jsonl`);

  it('runs concurrent commands on one path one at a time, with increasing fencing tokens', async () => {
    const log = logFile('mutex');
    const runs = [1, 2, 3].map(() => startCli(['exec', '/cli/mutex', '--', process.execPath, HOLD, log, '300'], env));
    const codes = await Promise.all(runs.map((r) => r.exited()));
    assert.deepEqual(codes, [0, 0, 0], runs.map((r) => r.stderr()).join('\n'));
    const spans = intervals(log);
    assert.equal(spans.length, 3);
    for (let i = 1; i < spans.length; i++) {
      assert.ok(spans[i]!.start >= spans[i - 1]!.end, `hold ${i} started before hold ${i - 1} ended`);
      assert.ok(BigInt(spans[i]!.token) > BigInt(spans[i - 1]!.token), 'fencing tokens increase');
    }
    assert.deepEqual((await client.getChildren('/cli/mutex')).children, []);
    for (const run of runs) assert.match(run.stderr(), /^(|zklock: waiting for \/cli\/mutex: position \d of \d in the queue; held by [^\n]+\n)$/, 'at most one line each, and only for a wait');
  });

  it('says once on stderr that it waits when stderr is not a terminal, and nothing for a free lock', async () => {
    const free = await runCli(['exec', '/cli/announce', '--', process.execPath, '-e', ''], env);
    assert.equal(free.code, 0, free.stderr);
    assert.equal(free.stderr, '', 'a free lock: stderr stays clean');
    const holder = await new Mutex(client, '/cli/announce', { ownerId: 'the-holder' }).acquire({ timeout: ROUND_TRIPS_MS });
    const first = startCli(['exec', '/cli/announce', '--', process.execPath, '-e', ''], env);
    await eventually(() => /^zklock: waiting for \/cli\/announce: position 1 of 1 in the queue; held by the-holder for /.test(first.stderr()), ROUND_TRIPS_MS, 'the first waiter says it waits');
    const second = startCli(['exec', '/cli/announce', '--', process.execPath, '-e', ''], env);
    await eventually(() => /^zklock: waiting for \/cli\/announce: position 2 of 2 in the queue; held by the-holder for /.test(second.stderr()), ROUND_TRIPS_MS, 'the second waiter says it waits');
    // Nothing to ask the server for here: "no second line" needs a few of the waiters' polls (500 ms apart) to pass.
    await delay(1_500);
    await holder.release();
    assert.deepEqual(await Promise.all([first.exited(), second.exited()]), [0, 0]);
    for (const run of [first, second]) assert.equal(run.stderr().split('\n').length, 2, `one line, not a log: ${run.stderr()}`);
  });

  it('says once on stderr that a semaphore wait waits', async () => {
    const holder = await new Semaphore(client, '/cli/announce-sem', 1, { ownerId: 'the-holder' }).acquire({ timeout: ROUND_TRIPS_MS });
    const run = startCli(['exec', '--limit', '1', '/cli/announce-sem', '--', process.execPath, '-e', ''], env);
    await eventually(() => /^zklock: waiting for \/cli\/announce-sem: position 1 of 1 in the queue; held by the-holder for /.test(run.stderr()), ROUND_TRIPS_MS, 'the wait said');
    await holder.release();
    assert.equal(await run.exited(), 0, run.stderr());
    assert.equal(run.stderr().split('\n').length, 2, run.stderr());
  });

  it('--read lets readers share the lock and keeps a writer out', async () => {
    const log = logFile('rw');
    const readers = [1, 2].map(() => startCli(['exec', '--read', '/cli/rw', '--', process.execPath, HOLD, log, String(LONG_HOLD_MS)], env));
    await waitForEvents(log, 'start', 2);
    const writer = await runCli(['exec', '--write', '--try', '/cli/rw', '--', process.execPath, HOLD, log, '0'], env);
    assert.equal(writer.code, 73, writer.stderr);
    endHolds(log);
    assert.deepEqual(await Promise.all(readers.map((r) => r.exited())), [0, 0]);
    assert.equal(maxConcurrency(intervals(log)), 2);
  });

  it('passes the child\'s exit code through, and sets ZKLOCK_NODE', async () => {
    const log = logFile('code');
    const result = await runCli(['exec', '/cli/code', '--', process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(log)}, process.env.ZKLOCK_NODE); process.exit(7)`], env);
    assert.equal(result.code, 7, result.stderr);
    assert.match(readFileSync(log, 'utf8'), /^\/cli\/code\/_c_.+-lock-\d{10}$/);
  });

  it('--try exits 73 without running the command when the lock is taken, and --timeout 74', async () => {
    const log = logFile('try');
    const holder = startCli(['exec', '/cli/try', '--', process.execPath, HOLD, log, String(LONG_HOLD_MS)], env);
    await waitForEvents(log, 'start');
    const tried = await runCli(['exec', '--try', '/cli/try', '--', process.execPath, HOLD, log, '0'], env);
    assert.equal(tried.code, 73, tried.stderr);
    assert.match(tried.stderr, /held by someone else/);
    const timed = await runCli(['exec', '--timeout', '300ms', '/cli/try', '--', process.execPath, HOLD, log, '0'], env);
    assert.equal(timed.code, 74, timed.stderr);
    assert.equal(readEvents(log).filter((e) => e.event === 'start').length, 1, 'only the holder ran');
    holder.child.kill('SIGTERM');
    await holder.exited();
    const free = await runCli(['exec', '--try', '/cli/try', '--', 'true'], env);
    assert.equal(free.code, 0, free.stderr);
  });

  for (const layout of ['curator', 'kazoo'] as const) {
    it(`--limit 2 lets exactly two of three run together${layout === 'kazoo' ? " (--layout kazoo: kazoo's Semaphore layout, leases the path's children)" : ''}`, async () => {
      const log = logFile(`limit-${layout}`);
      const path = `/cli/limit-${layout}`;
      const runs = [1, 2, 3].map(() => startCli(['exec', '--limit', '2', '--layout', layout, path, '--', process.execPath, HOLD, log, String(LONG_HOLD_MS)], env));
      // Two hold until the test ends their holds, however far apart the three processes started.
      await waitForEvents(log, 'start', 2);
      const leases = layout === 'kazoo' ? (await client.getChildren(path)).children : (await client.getChildren(`${path}/leases`)).children;
      assert.equal(leases.length, 2, `two lease nodes where ${layout}'s layout keeps them`);
      endHolds(log);
      await waitForEvents(log, 'start', 3);
      endHolds(log);
      const codes = await Promise.all(runs.map((r) => r.exited()));
      assert.deepEqual(codes, [0, 0, 0], runs.map((r) => r.stderr()).join('\n'));
      const spans = intervals(log);
      assert.equal(spans.length, 3);
      assert.equal(maxConcurrency(spans), 2);
    });
  }

  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    it(`passes ${signal} to the command and removes its node`, async () => {
      const log = logFile(signal);
      const run = startCli(['exec', `/cli/${signal}`, '--', process.execPath, HOLD, log, String(LONG_HOLD_MS)], env);
      await waitForEvents(log, 'start');
      assert.equal((await client.getChildren(`/cli/${signal}`)).children.length, 1);
      run.child.kill(signal);
      assert.equal(await run.exited(), 42, run.stderr()); // the fixture's exit code after a signal
      assert.deepEqual(readEvents(log).filter((e) => e.event === 'signal').map((e) => e.signal), [signal]);
      assert.deepEqual((await client.getChildren(`/cli/${signal}`)).children, []);
    });
  }

  it('stops waiting on SIGINT: exits 130 and leaves no node', async () => {
    const log = logFile('wait-int');
    const holder = startCli(['exec', '/cli/wait-int', '--', process.execPath, HOLD, log, String(LONG_HOLD_MS)], env);
    await waitForEvents(log, 'start');
    const waiter = startCli(['exec', '/cli/wait-int', '--', 'true'], env);
    await eventually(async () => (await client.getChildren('/cli/wait-int')).children.length === 2);
    waiter.child.kill('SIGINT');
    assert.equal(await waiter.exited(), 130);
    assert.equal((await client.getChildren('/cli/wait-int')).children.length, 1);
    holder.child.kill('SIGTERM');
    await holder.exited();
  });

  it('--verbose shows the queue of a mutex whose path also holds a folder named locks (not an empty semaphore)', async () => {
    await client.ensurePath('/cli/beside/locks');
    const holder = await new Mutex(client, '/cli/beside', { ownerId: 'the-holder' }).acquire({ timeout: ROUND_TRIPS_MS });
    const run = startCli(['exec', '--verbose', '/cli/beside', '--', process.execPath, '-e', ''], env);
    await eventually(() => /waiting for \/cli\/beside: position 1 of 1 in the queue; held by the-holder/.test(run.stderr()), ROUND_TRIPS_MS, 'the wait as it is');
    await holder.release();
    assert.equal(await run.exited(), 0, run.stderr());
  });

  it('exits 127 for a command that does not exist, 2 for bad usage, and takes no lock', async () => {
    const missing = await runCli(['exec', '/cli/missing', '--', 'no-such-command-zklock'], env);
    assert.equal(missing.code, 127);
    assert.match(missing.stderr, /command not found: no-such-command-zklock/);
    assert.equal(await client.exists('/cli/missing'), null, 'refused before the lock was even looked at');
    assert.equal((await runCli(['exec', 'relative/path', '--', 'true'], env)).code, 2);
    assert.equal((await runCli(['exec', '--read', '--write', '/cli/rw', '--', 'true'], env)).code, 2);
    assert.equal((await runCli(['exec', '--timeout', 'soon', '/cli/x', '--', 'true'], env)).code, 2);
    const tryTimeout = await runCli(['exec', '--try', '--timeout', '5s', '/cli/x', '--', 'true'], env);
    assert.equal(tryTimeout.code, 2, tryTimeout.stderr);
    assert.match(tryTimeout.stderr, /--try does not wait for the lock: --timeout cannot be combined with it/);
  });

  it('refuses a command it cannot run before it queues: 127 not found, 126 not executable, no node made', async () => {
    const holder = await new Mutex(client, '/cli/resolve', { ownerId: 'the-holder' }).acquire({ timeout: ROUND_TRIPS_MS });
    const plain = join(dir, 'not-executable.sh');
    writeFileSync(plain, '#!/bin/sh\n', { mode: 0o644 });
    const cases: [string[], NodeJS.ProcessEnv, number, RegExp][] = [
      [['/nonexistent/cmd'], env, 127, /command not found: \/nonexistent\/cmd/],
      [['./no-such-command-zklock'], env, 127, /command not found: \.\/no-such-command-zklock/],
      [['no-such-command-zklock'], env, 127, /command not found: no-such-command-zklock/],
      [[plain], env, 126, /cannot execute .*not-executable\.sh: permission denied/],
      [[dir], env, 126, /cannot execute /],
      // A bare name is looked for on PATH only, as spawn does: the file beside us is not it.
      [['not-executable.sh'], { ...env, PATH: dir }, 126, /cannot execute not-executable\.sh: permission denied/],
      [['true'], { ...env, PATH: join(dir, 'nowhere') }, 127, /command not found: true/],
    ];
    for (const [command, runEnv, code, message] of cases) {
      // Before, each queued behind the holder and waited out the timeout (74).
      const run = await runCli(['exec', '--timeout', '4s', '/cli/resolve', '--', ...command], runEnv);
      assert.equal(run.code, code, `${command.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, message);
      assert.match(run.stderr, /the lock was not taken/);
    }
    assert.equal((await client.getChildren('/cli/resolve')).children.length, 1, 'only the holder ever queued');
    await holder.release();
  });

  it('exits 77 and runs nothing when the server refuses the --auth credentials', async () => {
    const log = logFile('auth');
    const refused = await runCli(['exec', '--auth', 'nosuch:x', '/cli/auth', '--', process.execPath, HOLD, log, '0'], env);
    assert.equal(refused.code, 77, refused.stderr);
    assert.match(refused.stderr, /refused the credentials.*AUTHFAILED/);
    assert.deepEqual(readEvents(log), [], 'the command never ran');
    assert.equal(await client.exists('/cli/auth'), null, 'not even the lock path was created');
  });
});
