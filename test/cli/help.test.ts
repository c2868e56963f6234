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

  // Each command's table lists only the codes it can end with: the lock's and the command's (73-75, 124, 126/127) are exec's, 69 and 77 need a ZooKeeper to talk to.
  const scopes: { command: string[]; execCodes: boolean; zookeeperCodes: boolean }[] = [
    { command: [], execCodes: true, zookeeperCodes: true },
    { command: ['exec'], execCodes: true, zookeeperCodes: true },
    ...['status', 'ls', 'ui', 'revoke', 'release'].map((name) => ({ command: [name], execCodes: false, zookeeperCodes: true })),
    ...['server', 'demo'].map((name) => ({ command: [name], execCodes: false, zookeeperCodes: false })),
  ];
  for (const { command, execCodes, zookeeperCodes } of scopes) {
    it(`zklock ${[...command, '--help'].join(' ')} shows examples and the exit codes it can end with`, async () => {
      const result = await runCli([...command, '--help']);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /Examples:/);
      const table = result.stdout.slice(result.stdout.indexOf('Exit codes:'));
      assert.match(table, /^Exit codes:\n {2}0 {8}success/);
      assert.match(table, /\n {2}128\+N {4}interrupted by signal N/);
      for (const code of ['73', '74', '75', '124', '126/127']) assert.equal(new RegExp(`\\n {2}${code} `).test(table), execCodes, `${code} in:\n${table}`);
      for (const code of ['69', '77']) assert.equal(new RegExp(`\\n {2}${code} `).test(table), zookeeperCodes, `${code} in:\n${table}`);
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
