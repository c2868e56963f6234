import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { ZooKeeperClient } from '../client/client.js';
import type { EnsembleConfig } from '../client/ensemble-config.js';
import { parseEnsembleConfig } from '../client/ensemble-config.js';
import { isZooKeeperError } from '../protocol/index.js';
import { pollUntil } from './bounded-wait.js';
import { HarnessError } from './harness-error.js';
import { LOOPBACK } from './loopback-ports.js';
import type { SuperDigestCredentials } from './zookeeper-options.js';

/** A member's client, quorum and election ports. */
export interface DynamicMemberPorts {
  readonly client: number;
  readonly quorum: number;
  readonly election: number;
}

/** What {@link ZooKeeperEnsemble.reconfig} changes: members to add (started with `addMember`) and to remove, by member or `myid`. */
export interface ReconfigChange {
  readonly add?: readonly (number | { readonly id: number })[];
  readonly remove?: readonly (number | { readonly id: number })[];
}

/** The file each member's zoo.cfg names as its `dynamicConfigFile`; the server writes its successors (`zoo.cfg.dynamic.<version>`) itself. */
export const DYNAMIC_CONFIG_FILE = 'zoo.cfg.dynamic';

/** A member's line in a dynamic configuration: quorum and election ports, then `;` and where clients reach it. */
export function memberLine(id: number, ports: DynamicMemberPorts): string {
  return `server.${id}=${LOOPBACK}:${ports.quorum}:${ports.election}:participant;${LOOPBACK}:${ports.client}`;
}

/**
 * The zoo.cfg entries of a member of a reconfigurable ensemble: `reconfigEnabled`, a dynamic
 * config file of its own, and `standaloneEnabled=false`, without which ZooKeeper refuses a
 * configuration of fewer than 2 participants and a 1-member ensemble could never grow.
 */
export function reconfigEntries(memberDir: string): Record<string, string | boolean> {
  return { reconfigEnabled: true, standaloneEnabled: false, dynamicConfigFile: join(memberDir, DYNAMIC_CONFIG_FILE) };
}

/**
 * The super user a reconfigurable ensemble runs with when the caller configured none: a
 * reconfig needs WRITE on /zookeeper/config, whose ACL grants everyone READ alone, and ZooKeeper
 * 3.8 lets only a super user (or a server run with `skipACL`, which would turn every test's ACLs
 * off) past it.
 */
export function harnessSuperUser(): SuperDigestCredentials {
  return { user: 'zklock-harness-super', password: randomBytes(12).toString('hex') };
}

/** The `myid` of each entry of a {@link ReconfigChange} list. */
export function memberIds(entries: ReconfigChange['add'], option: string): number[] {
  return (entries ?? []).map((entry) => {
    // Typed, but a JavaScript caller may pass anything.
    const id: unknown = typeof entry === 'number' ? entry : (entry as { id?: unknown } | undefined)?.id;
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0) {
      throw new HarnessError('INVALID_OPTIONS', `${option}: a member or a myid, got ${String(id)}`, { option, value: entry });
    }
    return id;
  });
}

/**
 * Runs one incremental reconfig as the super user over a client of its own (any member of the
 * current configuration forwards it to the leader), bounded by `timeoutMs`; the client is closed
 * whatever happens. Resolves with the configuration the ensemble committed. A reconfig that
 * removes the leader often loses its reply: the leader steps down once it committed, and the
 * members drop their clients while they elect the next one. Its outcome is then read from
 * /zookeeper/config (after a sync, so the member answering has applied it): done when the
 * joining ids are in and the leaving ones out, else the CONNECTIONLOSS stands.
 */
export async function runReconfig(
  connectString: string,
  superUser: SuperDigestCredentials,
  joining: readonly string[],
  leaving: readonly number[],
  timeoutMs: number,
): Promise<EnsembleConfig> {
  const admin = await ZooKeeperClient.connect(connectString, {
    auth: [{ scheme: 'digest', auth: `${superUser.user}:${superUser.password}` }],
    timeout: timeoutMs,
  });
  const deadline = Date.now() + timeoutMs;
  try {
    const { config } = await admin.reconfig(
      { joining: joining.length > 0 ? joining : undefined, leaving: leaving.length > 0 ? leaving : undefined },
      { timeout: timeoutMs },
    );
    return config;
  } catch (error) {
    if (!isZooKeeperError(error) || error.code !== 'CONNECTIONLOSS') throw error;
    const joiningIds = joining.map((line) => Number(/^server\.(\d+)=/.exec(line)?.[1]));
    const config = await pollUntil(
      async () => {
        const left = Math.max(deadline - Date.now(), 1);
        await admin.sync('/', { timeout: left });
        return parseEnsembleConfig((await admin.getConfig({ timeout: left })).data);
      },
      { timeoutMs: Math.max(deadline - Date.now(), 1), intervalMs: 100, onTimeout: () => error },
    );
    const ids = new Set(config.members.map((member) => member.id));
    if (joiningIds.every((id) => ids.has(id)) && leaving.every((id) => !ids.has(id))) return config;
    throw error;
  } finally {
    await admin.close();
  }
}
