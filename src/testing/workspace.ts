import { join } from 'node:path';
import { locateZooKeeper } from './locate-zookeeper.js';
import type { ZooKeeperInstallation } from './locate-zookeeper.js';
import { saslJvmArguments } from './sasl-config.js';
import { createTempDir, removeTempDir } from './temp-dir.js';
import { createTlsMaterial } from './tls-keystore.js';
import type { TlsMaterial } from './tls-keystore.js';
import { x509JvmArgs } from './zookeeper-config.js';
import { jvmArguments } from './zookeeper-options.js';
import type { Timing, ZooKeeperOptions } from './zookeeper-options.js';

/** What a server or ensemble prepares once, before its first start, and keeps until closed. */
export interface Workspace {
  readonly installation: ZooKeeperInstallation;
  readonly timing: Timing;
  /** The temporary directory holding configs, data, logs and TLS material. */
  readonly dir: string;
  readonly jvmArgs: readonly string[];
  readonly tls: TlsMaterial | undefined;
}

/** Locates ZooKeeper, creates the temporary directory and, with `tls`, the key store. */
export async function createWorkspace(
  options: ZooKeeperOptions,
  timing: Timing,
  purpose: string,
  roleJvmArgs: readonly string[] = [],
): Promise<Workspace> {
  const installation = await locateZooKeeper(options);
  const dir = await createTempDir(purpose, options.tempDir);
  try {
    const clients = options.x509Clients ?? [];
    const tls = options.tls === true || clients.length > 0 ? await createTlsMaterial(join(dir, 'tls'), installation.java, clients) : undefined;
    const sasl = options.sasl === undefined ? [] : await saslJvmArguments(options.sasl, dir);
    return { installation, timing, dir, jvmArgs: jvmArguments(options, [...roleJvmArgs, ...x509JvmArgs(tls), ...sasl]), tls };
  } catch (error) {
    await removeTempDir(dir);
    throw error;
  }
}
