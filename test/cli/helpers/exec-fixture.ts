import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { ZooKeeperClient, ZooKeeperError } from '../../../src/index.js';
import type { ZooKeeperServerOptions } from '../../../src/testing/index.js';
import { ZooKeeperServer } from '../../../src/testing/index.js';

export interface ExecFixture {
  server: ZooKeeperServer;
  /** The test's own client, for setting up and checking what the CLI did. */
  client: ZooKeeperClient;
  /** The environment that points the CLI at the server. */
  env: NodeJS.ProcessEnv;
  /** A directory of the describe's own, for the hold fixture's logs. */
  dir: string;
  /** The contender nodes under `path`, [] when it does not exist. */
  readonly contenders: (path: string) => Promise<string[]>;
}

/**
 * What the `zklock exec` suites share: a server, a client of it and a scratch directory, set up
 * in the describe's `before` and removed in its `after`. Read the fields inside tests and hooks.
 */
export function execFixture(name: string, options: ZooKeeperServerOptions = {}): ExecFixture {
  const fixture = {
    contenders: async (path: string): Promise<string[]> => {
      try {
        return (await fixture.client.getChildren(path)).children;
      } catch (error) {
        if (error instanceof ZooKeeperError && error.code === 'NONODE') return [];
        throw error;
      }
    },
  } as ExecFixture;
  before(async () => {
    fixture.server = await ZooKeeperServer.start(options);
    fixture.client = await ZooKeeperClient.connect(fixture.server.connectString);
    fixture.env = { ZOOKEEPER_CONNECT: fixture.server.connectString };
    fixture.dir = mkdtempSync(join(tmpdir(), `zklock-cli-${name}-`));
  });
  after(async () => {
    await fixture.client?.close();
    await fixture.server?.stop();
    if (fixture.dir) rmSync(fixture.dir, { recursive: true, force: true });
  });
  return fixture;
}
