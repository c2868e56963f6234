import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { isHarnessError, locateZooKeeper, ZooKeeperServer } from '../../src/testing/index.js';
import { harnessBound } from '../support/bounds.js';

// A JVM that fails to bind and then logs on (an ensemble member retries its election port and
// logs each status probe) must still be read as a port conflict, so that the harness starts it
// again on fresh ports. Seen under load: the bind failure had left the log's last 40 lines and
// the start failed as PROCESS_EXITED. The "java" here is a script that logs as such a JVM does
// and exits with ZooKeeper's code for an unusable election port (14); the real java answers
// the harness's `java -version`.
describe('a port conflict logged early in the start', { timeout: harnessBound(3, 1) }, () => {
  const home = mkdtempSync(join(tmpdir(), 'zklock-fake-java-'));
  after(() => rmSync(home, { recursive: true, force: true }));

  it('is PORT_UNAVAILABLE, which the harness retries on fresh ports, however many lines follow it', async () => {
    const real = (await locateZooKeeper()).java.executable;
    mkdirSync(join(home, 'bin'));
    const java = join(home, 'bin', 'java');
    writeFileSync(
      java,
      [
        '#!/bin/sh',
        `if [ "$1" = "-version" ]; then exec '${real}' -version; fi`,
        'echo "java.net.BindException: Address already in use"',
        'i=0; while [ $i -lt 200 ]; do echo "INFO Processing srvr command from /127.0.0.1:$i"; i=$((i+1)); done',
        'exit 14',
        '',
      ].join('\n'),
    );
    chmodSync(java, 0o755);
    const server = new ZooKeeperServer({ javaHome: home });
    try {
      await assert.rejects(server.start(), (error) => {
        assert.ok(isHarnessError(error, 'PORT_UNAVAILABLE'), `PORT_UNAVAILABLE, not ${String(error)}`);
        assert.match(error.message, /\(java\.net\.BindException: Address already in use\)/, 'the message names the conflict the tail no longer shows');
        return true;
      });
    } finally {
      await server.close();
    }
  });
});

describe('a chosen port another ZooKeeper already serves', { timeout: harnessBound(3, 2) }, () => {
  it('is PORT_UNAVAILABLE: the other server is not taken for ours, and keeps serving', async () => {
    // The readiness probe asked the port whether a ZooKeeper serves there, and the other one
    // answered before our JVM failed to bind it: the start resolved, and the caller's writes
    // went to the other server (found by a new-user trial, `zklock server --port`).
    await using other = await ZooKeeperServer.start();
    const second = new ZooKeeperServer({ port: other.port });
    try {
      await assert.rejects(second.start(), (error) => {
        assert.ok(isHarnessError(error, 'PORT_UNAVAILABLE'), `PORT_UNAVAILABLE, not ${String(error)}`);
        return true;
      });
    } finally {
      await second.close();
    }
    assert.equal((await other.status())?.mode, 'standalone', 'the other server still serves');
  });
});
