import { join } from 'node:path';
import { allocatePort, LOOPBACK } from './loopback-ports.js';
import { MemberLinks } from './member-links.js';
import type { Workspace } from './workspace.js';
import { dataDirIn, renderConfig } from './zookeeper-config.js';
import type { ZooKeeperOptions } from './zookeeper-options.js';
import type { LaunchPlan } from './zookeeper-process.js';
import { DYNAMIC_CONFIG_FILE, memberLine, reconfigEntries } from './reconfig.js';

// An ensemble's options and what its members are launched with: ports, zoo.cfg, myid and the
// dynamic config file. Apart from zookeeper-ensemble.ts, which starts, watches and reconfigures them.

/** Options for {@link ZooKeeperEnsemble}. */
export interface ZooKeeperEnsembleOptions extends ZooKeeperOptions {
  /** Number of members. Default 3. */
  readonly size?: 3 | 5;
  /** Ticks a follower may take to connect and sync to the leader. Default 10. */
  readonly initLimit?: number;
  /** Ticks a follower may lag behind the leader before it is dropped. Default 5. */
  readonly syncLimit?: number;
  /**
   * Route every member-to-member connection (quorum and leader election, each direction)
   * through a proxy of the harness, for {@link ZooKeeperEnsemble.partition} and the other link
   * faults. Needs ZooKeeper's default `reconfigEnabled=false`, under which each member keeps its
   * own view of where its peers are. Default false.
   */
  readonly linkProxies?: boolean;
  /**
   * Dynamic reconfiguration (`reconfigEnabled=true`, `standaloneEnabled=false`, a dynamic config
   * file per member): {@link ZooKeeperEnsemble.addMember} starts a new member that joins as a
   * non-voting follower, {@link ZooKeeperEnsemble.reconfig} adds and removes members. A reconfig
   * needs a super user: `superDigest` if given, else one of the harness's own. Not with
   * `linkProxies` or `tls`. Default false.
   */
  readonly reconfigEnabled?: boolean;
}

/** The harness's default `initLimit`, ticks. */
export const DEFAULT_INIT_LIMIT = 10;
/** The harness's default `syncLimit`, ticks. */
export const DEFAULT_SYNC_LIMIT = 5;

export interface QuorumLimits {
  readonly initLimit: number;
  readonly syncLimit: number;
}

export interface MemberPorts {
  readonly client: number;
  readonly quorum: number;
  readonly election: number;
  readonly secure: number | undefined;
}

export async function allocateMemberPorts(tls: boolean): Promise<MemberPorts> {
  return {
    client: await allocatePort(),
    quorum: await allocatePort(),
    election: await allocatePort(),
    secure: tls ? await allocatePort() : undefined,
  };
}

export async function planMembers(
  options: ZooKeeperEnsembleOptions,
  limits: QuorumLimits,
  workspace: Workspace,
  size: number,
): Promise<{ plans: LaunchPlan[]; links: MemberLinks | undefined; ports: MemberPorts[] }> {
  const ports: MemberPorts[] = [];
  for (let i = 0; i < size; i++) ports.push(await allocateMemberPorts(workspace.tls !== undefined));
  if (options.reconfigEnabled === true) {
    const lines = ports.map((p, index) => memberLine(index + 1, p));
    return { plans: ports.map((p, index) => dynamicPlan(options, limits, workspace, index + 1, p, lines)), links: undefined, ports };
  }
  const links = options.linkProxies === true ? await MemberLinks.start(ports) : undefined;
  const plans = ports.map((p, index) => {
    const id = index + 1;
    const roleEntries: Record<string, number | string> = { ...limits };
    ports.forEach((peer, peerIndex) => {
      const peerId = peerIndex + 1;
      // A member's own line is where it listens; the others are where it dials (via a proxy with links).
      roleEntries[`server.${peerId}`] =
        links === undefined || peerId === id ? `${LOOPBACK}:${peer.quorum}:${peer.election}` : links.serverAddress(id, peerId);
    });
    const dir = join(workspace.dir, `member-${id}`);
    const tls = workspace.tls === undefined || p.secure === undefined ? undefined : { securePort: p.secure, material: workspace.tls };
    const config = renderConfig({ options, timing: workspace.timing, dataDir: dataDirIn(dir), clientPort: p.client, tls, roleEntries });
    return { workspace, dir, files: { 'zoo.cfg': config, 'data/myid': `${id}\n` }, clientPort: p.client, securePort: p.secure };
  });
  return { plans, links, ports };
}

/** A reconfigurable member's plan: its membership lives in the dynamic config file, written once (the server keeps it from then on). */
export function dynamicPlan(
  options: ZooKeeperEnsembleOptions,
  limits: QuorumLimits,
  workspace: Workspace,
  id: number,
  ports: MemberPorts,
  lines: readonly string[],
): LaunchPlan {
  const dir = join(workspace.dir, `member-${id}`);
  const roleEntries = { ...limits, ...reconfigEntries(dir) };
  const config = renderConfig({ options, timing: workspace.timing, dataDir: dataDirIn(dir), clientPort: ports.client, roleEntries });
  const files = { 'zoo.cfg': config, [DYNAMIC_CONFIG_FILE]: lines.map((line) => `${line}\n`).join(''), 'data/myid': `${id}\n` };
  return { workspace, dir, files, clientPort: ports.client, securePort: undefined, writeOnce: true };
}
