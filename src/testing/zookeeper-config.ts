import { join } from 'node:path';
import { LOOPBACK } from './loopback-ports.js';
import type { TlsMaterial } from './tls-keystore.js';
import type { Timing, ZooKeeperOptions } from './zookeeper-options.js';

/** The data directory of a server or member whose files are in `dir`: its `conf` answer names it, which tells our JVM from another on the same port. */
export function dataDirIn(dir: string): string {
  return join(dir, 'data');
}

type ConfigEntries = Readonly<Record<string, string | number | boolean>>;

/** Everything one member's or server's zoo.cfg is made of. */
export interface ConfigInput {
  readonly options: ZooKeeperOptions;
  readonly timing: Timing;
  readonly dataDir: string;
  readonly clientPort: number;
  readonly tls?: { readonly securePort: number; readonly material: TlsMaterial };
  /** Role-specific entries (e.g. the ensemble's `server.N` lines); the user's `config` still wins. */
  readonly roleEntries?: ConfigEntries;
}

function tlsEntries(securePort: number, material: TlsMaterial): ConfigEntries {
  return {
    secureClientPort: securePort,
    // Without it ZooKeeper binds the secure port on 0.0.0.0, unlike clientPortAddress.
    secureClientPortAddress: LOOPBACK,
    // Only the Netty connection factory speaks TLS; it serves the plain port as well.
    serverCnxnFactory: 'org.apache.zookeeper.server.NettyServerCnxnFactory',
    'ssl.keyStore.location': material.keyStorePath,
    'ssl.keyStore.password': material.keyStorePassword,
    'ssl.keyStore.type': 'PKCS12',
    // Clients verify the server; it asks clients for a certificate only when there are x509 client
    // identities, and accepts clients without one then too.
    ...(material.trustStorePath === undefined
      ? { 'ssl.clientAuth': 'none' }
      : { 'ssl.clientAuth': 'want', 'ssl.trustStore.location': material.trustStorePath, 'ssl.trustStore.password': material.keyStorePassword, 'ssl.trustStore.type': 'PKCS12' }),
  };
}

/**
 * The `x509` auth scheme's provider, which ZooKeeper does not register by default and which reads
 * its key and trust stores from system properties, not from zoo.cfg.
 */
export function x509JvmArgs(material: TlsMaterial | undefined): string[] {
  if (material?.trustStorePath === undefined) return [];
  return [
    '-Dzookeeper.authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider',
    `-Dzookeeper.ssl.keyStore.location=${material.keyStorePath}`,
    `-Dzookeeper.ssl.keyStore.password=${material.keyStorePassword}`,
    '-Dzookeeper.ssl.keyStore.type=PKCS12',
    `-Dzookeeper.ssl.trustStore.location=${material.trustStorePath}`,
    `-Dzookeeper.ssl.trustStore.password=${material.keyStorePassword}`,
    '-Dzookeeper.ssl.trustStore.type=PKCS12',
  ];
}

/** Renders a zoo.cfg: harness defaults, then TLS, then role entries, then the user's `config`. */
export function renderConfig(input: ConfigInput): string {
  const entries: ConfigEntries = {
    tickTime: input.timing.tickTime,
    minSessionTimeout: input.timing.minSessionTimeout,
    maxSessionTimeout: input.timing.maxSessionTimeout,
    dataDir: input.dataDir,
    clientPort: input.clientPort,
    clientPortAddress: LOOPBACK,
    // The AdminServer would open an HTTP port on 0.0.0.0:8080 and clash between servers.
    'admin.enableServer': false,
    '4lw.commands.whitelist': '*',
    // Every test client connects from 127.0.0.1; ZooKeeper's default limit per address is 60.
    maxClientCnxns: 0,
    // Test data need not survive a machine crash; skipping fsync makes writes fast on slow disks.
    forceSync: 'no',
    ...(input.tls === undefined ? {} : tlsEntries(input.tls.securePort, input.tls.material)),
    ...(input.options.readOnlyMode === true ? { localSessionsEnabled: true } : {}),
    ...input.roleEntries,
    ...input.options.config,
  };
  return Object.entries(entries)
    .map(([key, value]) => `${key}=${String(value)}\n`)
    .join('');
}
