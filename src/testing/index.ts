// Our public types use Node's (Buffer, AbortSignal, EventEmitter, tls options): the reference makes
// the declarations stand on their own in a project whose tsconfig does not list "node" in "types".
/// <reference types="node" preserve="true" />
/**
 * `zklock/testing`: real ZooKeeper servers and ensembles for tests, plus a TCP fault proxy.
 *
 * Needs Java 11+ and ZooKeeper 3.5+ (found via options, `ZOOKEEPER_CLASSPATH`,
 * `ZOOKEEPER_HOME`, or Debian/Ubuntu's `zookeeper` package). Every server listens on
 * 127.0.0.1 only, on free ports, with its own temporary directory. Every JVM carries
 * `-Dzklock.harness.owner=<pid>` and is killed — and its directory removed — by a watchdog
 * process if the test process dies without closing it, even by SIGKILL.
 *
 * Defaults, chosen for fast and reliable tests on small machines (all overridable):
 * - zoo.cfg: `tickTime=500`, `minSessionTimeout=1000` (2 × tickTime), `maxSessionTimeout=60000`,
 *   `admin.enableServer=false`, `4lw.commands.whitelist=*`, `maxClientCnxns=0` (unlimited),
 *   `forceSync=no`; ensembles add `initLimit=10`, `syncLimit=5` (ticks) and a faster election
 *   retry (`zookeeper.cnxTimeout=1000`, `zookeeper.fastleader.maxNotificationInterval=1000`).
 * - JVM: {@link DEFAULT_JVM_ARGS} — `-Xms32m -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1
 *   -XX:-UsePerfData`; user `jvmArgs` come last and win.
 * - Bounds: start 30 s ({@link DEFAULT_START_TIMEOUT_MS}), SIGTERM grace 10 s, four-letter
 *   words 2 s; {@link ZooKeeperEnsemble.leader} and `waitForQuorum` default to the start bound.
 * - TLS (`tls: true`): Netty connection factory, `secureClientPort` on 127.0.0.1, a fresh EC
 *   key and self-signed certificate (CN/SAN 127.0.0.1, localhost) made with the JDK's keytool.
 * - Read-only mode (`readOnlyMode: true`): `-Dreadonlymode.enabled=true` and
 *   `localSessionsEnabled=true`, so that a member without quorum serves read-only clients.
 * - Link proxies (`linkProxies: true`, ensembles only): every member dials its peers through a
 *   proxy per directed link, for {@link ZooKeeperEnsemble.partition} and the other link faults.
 * - Reconfiguration (`reconfigEnabled: true`, ensembles only): `reconfigEnabled=true`,
 *   `standaloneEnabled=false`, a dynamic config file per member written once (the server keeps it
 *   from then on), and a super user for {@link ZooKeeperEnsemble.reconfig} (`superDigest`, or a
 *   random one of the harness's own).
 *
 * @packageDocumentation
 */

export { ZooKeeperServer } from './zookeeper-server.js';
export type { ZooKeeperServerOptions } from './zookeeper-server.js';
export { ZooKeeperEnsemble } from './zookeeper-ensemble.js';
export { EnsembleMember } from './ensemble-member.js';
export { DEFAULT_INIT_LIMIT, DEFAULT_SYNC_LIMIT } from './ensemble-plan.js';
export type { ZooKeeperEnsembleOptions } from './ensemble-plan.js';
export type { ReconfigChange } from './reconfig.js';
export type { CutOptions, LinkOptions } from './member-links.js';
export type { WaitOptions, ZooKeeperProcess, ZooKeeperProcessState } from './zookeeper-process.js';
export {
  DEFAULT_JVM_ARGS,
  DEFAULT_MAX_SESSION_TIMEOUT_MS,
  DEFAULT_START_TIMEOUT_MS,
  DEFAULT_STOP_TIMEOUT_MS,
  DEFAULT_TICK_TIME_MS,
} from './zookeeper-options.js';
export type { SuperDigestCredentials, ZooKeeperOptions } from './zookeeper-options.js';
export type { SaslServerOptions } from './sasl-config.js';

export { digestIdentity } from './identity.js';
export type { X509Client } from './tls-keystore.js';
export type { DigestIdentity } from './identity.js';

export { FaultProxy } from './fault-proxy.js';
export type { FaultProxyOptions, ProxyStats, WaitForBytesOptions } from './fault-proxy.js';
export { ProxyConnection } from './proxy-connection.js';
export type { ProxyChunkEvent, ProxyRequest, RequestDecider } from './proxy-connection.js';
export type { Direction, DirectionSelector } from './proxy-flow.js';
export { OPCODES_SINCE_ZOOKEEPER_36, asZooKeeper35 } from './zookeeper35.js';
export type { RequestVerdict } from './request-filter.js';

export { fourLetterWord, parseServerStatus } from './four-letter-word.js';
export type { FourLetterWordOptions, ServerMode, ServerStatus } from './four-letter-word.js';
export { locateZooKeeper } from './locate-zookeeper.js';
export type { LocatorEnvironment, ZooKeeperInstallation, ZooKeeperLocatorOptions } from './locate-zookeeper.js';
export type { JavaRuntime } from './locate-java.js';
export { HarnessError, isHarnessError } from './harness-error.js';
export type { HarnessErrorCode, HarnessErrorContexts } from './harness-error.js';
export { findHarnessProcesses, isProcessAlive } from './process-status.js';
export type { HarnessProcess } from './process-status.js';
export { HARNESS_OWNER_PROPERTY } from './process-watchdog.js';
