import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FaultProxy, ZooKeeperServer, isProcessAlive } from '../../src/testing/index.js';
import { ROUND_TRIPS_MS, sessionBound } from '../support/bounds.js';
import { HOLD, LONG_HOLD_MS, readEvents, startCli, waitForEvents } from './helpers/cli.js';

describe('zklock exec when the lock is lost', () => {
  let server: ZooKeeperServer;
  let dir: string;

  before(async () => {
    // Short ticks so a short session timeout is granted and expires quickly.
    server = await ZooKeeperServer.start({ tickTime: 200, minSessionTimeout: 400 });
    dir = mkdtempSync(join(tmpdir(), 'zklock-cli-loss-'));
  });

  after(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('terminates the command (SIGTERM, then SIGKILL after --grace) and exits 75', async () => {
    await using proxy = await FaultProxy.start({ targetPort: server.port });
    const log = join(dir, 'lost.jsonl');
    // 4 s, not less: a session of 1 s gives each connection attempt a third of a second, which a
    // busy machine does not always meet.
    const run = startCli(['exec', '--connect', proxy.connectString, '--session-timeout', '4s', '--grace', '500ms', '/cli/lost', '--', process.execPath, HOLD, log, String(LONG_HOLD_MS), '--ignore-term']);
    const [started] = await waitForEvents(log, 'start');
    proxy.blackhole();
    // The session is lost within its bound, then SIGTERM, 500 ms of grace and SIGKILL.
    const code = await run.exited(sessionBound(4000) + ROUND_TRIPS_MS);
    assert.equal(code, 75, run.stderr());
    assert.match(run.stderr(), /lost the lock \/cli\/lost/);
    assert.deepEqual(readEvents(log).filter((e) => e.event === 'signal').map((e) => e.signal), ['SIGTERM']);
    assert.equal(readEvents(log).some((e) => e.event === 'end'), false, 'the command did not run to its end');
    assert.equal(await isProcessAlive(started!.pid), false, 'the command was killed');
  });
});
