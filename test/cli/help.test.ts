import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { runCli } from './helpers/cli.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

describe('zklock --help and --version', () => {
  it('prints the version', async () => {
    const result = await runCli(['--version']);
    assert.equal(result.code, 0);
    assert.equal(result.stdout.trim(), pkg.version);
  });

  for (const command of [[], ['exec'], ['status'], ['ls'], ['ui'], ['revoke'], ['release'], ['server'], ['demo']]) {
    it(`zklock ${[...command, '--help'].join(' ')} shows examples and the exit codes`, async () => {
      const result = await runCli([...command, '--help']);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /Examples:/);
      assert.match(result.stdout, /75 {7}exec: the lock was lost/);
      assert.match(result.stdout, /124 {6}exec --max-hold: the command held the lock too long/);
    });
  }

  it('exits 2 with a message for unknown commands and options', async () => {
    const unknown = await runCli(['frobnicate']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown command 'frobnicate'/);
    const option = await runCli(['status', '--nope', '/x']);
    assert.equal(option.code, 2);
    assert.match(option.stderr, /unknown option '--nope'/);
  });

  it('exits 2, not 69, for a connect string or a TLS file it cannot use: nothing to retry', async () => {
    const port = await runCli(['ls', '/', '--connect', '127.0.0.1:notaport']);
    assert.equal(port.code, 2, port.stderr);
    assert.match(port.stderr, /INVALID_ARGUMENT: bad host "127\.0\.0\.1:notaport"/);
    const ca = await runCli(['ls', '/', '--connect', '127.0.0.1:1', '--tls-ca', '/nonexistent.pem']);
    assert.equal(ca.code, 2, ca.stderr);
    assert.match(ca.stderr, /cannot read the --tls-ca file/);
  });

  it('exits 69 when ZooKeeper cannot be reached', async () => {
    const result = await runCli(['status', '--connect', '127.0.0.1:1', '--connect-timeout', '500ms', '/x']);
    assert.equal(result.code, 69);
    assert.match(result.stderr, /cannot connect to ZooKeeper at 127\.0\.0\.1:1: TIMEOUT: .*\(CONNECTIONLOSS: .*ECONNREFUSED/);
  });
});
