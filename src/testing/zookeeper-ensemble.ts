import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { pollUntil } from './bounded-wait.js';
import { HarnessError, isHarnessError } from './harness-error.js';
import { retryOnPortConflict } from './loopback-ports.js';
import type { CutOptions, LinkOptions, MemberLinks } from './member-links.js';
import { removeTempDir } from './temp-dir.js';
import { createWorkspace } from './workspace.js';
import type { Workspace } from './workspace.js';
import { positiveInteger, validateOptions } from './zookeeper-options.js';
import type { Timing } from './zookeeper-options.js';
import type { EnsembleConfig } from '../client/ensemble-config.js';
import { harnessSuperUser, memberIds, memberLine, runReconfig } from './reconfig.js';
import type { ReconfigChange } from './reconfig.js';
import type { SuperDigestCredentials } from './zookeeper-options.js';
import type { LaunchPlan, WaitOptions } from './zookeeper-process.js';
import { EnsembleMember } from './ensemble-member.js';
import { allocateMemberPorts, DEFAULT_INIT_LIMIT, DEFAULT_SYNC_LIMIT, dynamicPlan, planMembers } from './ensemble-plan.js';
import type { MemberPorts, QuorumLimits, ZooKeeperEnsembleOptions } from './ensemble-plan.js';

/**
 * Leader election tuning: peers give up connecting to a dead peer after 1 s instead of 5 s,
 * and a peer that heard nothing re-sends its vote at least every second instead of backing off
 * to 60 s — which would otherwise let one slow-starting member stall the first election.
 */
const ELECTION_JVM_ARGS: readonly string[] = [
  '-Dzookeeper.cnxTimeout=1000',
  '-Dzookeeper.fastleader.maxNotificationInterval=1000',
];

const SERVING_MODES: ReadonlySet<string> = new Set(['leader', 'follower', 'observer']);
const SURVEY_PROBE_TIMEOUT_MS = 1_000;
const SURVEY_INTERVAL_MS = 100;

/**
 * A real ZooKeeper ensemble of 3 or 5 JVMs on 127.0.0.1, each with its own free client, quorum
 * and election ports, sharing one temporary directory. Per-member faults go through
 * {@link members}; {@link leader} and {@link waitForQuorum} observe the result.
 */
export class ZooKeeperEnsemble {
  readonly #options: ZooKeeperEnsembleOptions;
  readonly #timing: Timing;
  readonly #limits: QuorumLimits;
  readonly #members: EnsembleMember[];
  #workspace: Workspace | undefined;
  #plans: LaunchPlan[] | undefined;
  /** Each member's ports, in `myid` order. */
  #ports: MemberPorts[] = [];
  /** The `myid`s of the current configuration: every member, until a reconfig changes it. */
  #config: Set<number>;
  /** Who may reconfig (reconfigEnabled only). */
  readonly #superUser: SuperDigestCredentials | undefined;
  #links: MemberLinks | undefined;
  #closed = false;

  /** Validates the options (`INVALID_OPTIONS`); nothing else happens until {@link start}. */
  constructor(options: ZooKeeperEnsembleOptions = {}) {
    const size = options.size ?? 3;
    if (size !== 3 && size !== 5) {
      throw new HarnessError('INVALID_OPTIONS', `An ensemble has 3 or 5 members, not ${String(size)}`, { option: 'size', value: size });
    }
    if (options.reconfigEnabled === true && (options.linkProxies === true || options.tls === true || options.x509Clients !== undefined)) {
      throw new HarnessError('INVALID_OPTIONS', 'reconfigEnabled does not go with linkProxies or tls', { option: 'reconfigEnabled', value: true });
    }
    this.#superUser = options.reconfigEnabled === true ? (options.superDigest ?? harnessSuperUser()) : undefined;
    this.#options = this.#superUser === undefined ? options : { ...options, superDigest: this.#superUser };
    this.#config = new Set(Array.from({ length: size }, (_, index) => index + 1));
    this.#timing = validateOptions(options);
    this.#limits = {
      initLimit: positiveInteger('initLimit', options.initLimit, DEFAULT_INIT_LIMIT),
      syncLimit: positiveInteger('syncLimit', options.syncLimit, DEFAULT_SYNC_LIMIT),
    };
    this.#members = Array.from({ length: size }, (_, index) => this.#newMember(index + 1));
  }

  #newMember(id: number): EnsembleMember {
    return new EnsembleMember(
      id,
      () => this.#plans?.[id - 1],
      () => this.#closed,
    );
  }

  /** Creates and starts an ensemble; on failure nothing is left behind. */
  static async start(options: ZooKeeperEnsembleOptions = {}): Promise<ZooKeeperEnsemble> {
    // Inside the async function, so invalid options reject rather than throw.
    const ensemble = new ZooKeeperEnsemble(options);
    try {
      await ensemble.start();
      return ensemble;
    } catch (error) {
      await ensemble.close();
      throw error;
    }
  }

  /** All members, in `myid` order: with `reconfigEnabled`, also those added, and those a reconfig removed. */
  get members(): readonly EnsembleMember[] {
    return this.#members;
  }

  /** The members of the current configuration (all of them unless {@link reconfig} changed it), in `myid` order. */
  get configMembers(): readonly EnsembleMember[] {
    return this.#members.filter((member) => this.#config.has(member.id));
  }

  /** The member with `myid` `id` (1-based). */
  member(id: number): EnsembleMember {
    const member = this.#members[id - 1];
    if (member === undefined) {
      throw new HarnessError('INVALID_OPTIONS', `No member ${id} in an ensemble of ${this.#members.length}`, { option: 'id', value: id });
    }
    return member;
  }

  /** The plain client address of every member of the current configuration, comma-separated: `127.0.0.1:p1,127.0.0.1:p2,...`. */
  get connectString(): string {
    return this.configMembers.map((member) => member.connectString).join(',');
  }

  /** Every member's TLS client address, comma-separated; undefined unless started with `tls: true`. */
  get secureConnectString(): string | undefined {
    const addresses = this.#members.map((member) => member.secureConnectString);
    return addresses.every((address) => address !== undefined) ? addresses.join(',') : undefined;
  }

  /** The self-signed certificate (PEM) all members present on their TLS port; undefined unless `tls: true`. */
  get tlsCertificatePem(): string | undefined {
    return this.#workspace?.tls?.certificatePem;
  }

  /** The ensemble's temporary directory (one `member-<id>` directory per member). */
  get directory(): string | undefined {
    return this.#workspace?.dir;
  }

  /**
   * Starts every stopped member and waits until a quorum serves. The first start locates
   * ZooKeeper, creates the directory and picks ports (retrying on fresh ports if one is taken
   * meanwhile); later starts reuse ports and data.
   */
  async start(): Promise<void> {
    if (this.#closed) {
      throw new HarnessError('INVALID_STATE', 'Cannot start: the ensemble is closed', { operation: 'start', state: 'closed' });
    }
    if (this.#plans !== undefined) {
      await Promise.all(this.configMembers.filter((member) => member.state === 'stopped').map((member) => member.start()));
    } else {
      const workspace = (this.#workspace ??= await createWorkspace(this.#options, this.#timing, 'ensemble', ELECTION_JVM_ARGS));
      await retryOnPortConflict(async () => {
        const planned = await planMembers(this.#options, this.#limits, workspace, this.#members.length);
        this.#plans = planned.plans;
        this.#links = planned.links;
        this.#ports = planned.ports;
        try {
          await Promise.all(this.#members.map((member) => member.start()));
        } catch (error) {
          // One member failing leaves the others waiting for a quorum that will never come.
          await Promise.allSettled(this.#members.map((member) => member.kill()));
          await this.#links?.close();
          this.#plans = undefined;
          this.#links = undefined;
          throw error;
        }
      });
    }
    await this.waitForQuorum();
  }

  /**
   * Waits (bounded; default `startTimeoutMs`) until the ensemble serves: every running, unpaused
   * member answers `srvr` as leader or follower, they are a majority of the ensemble, and
   * exactly one of them leads. Resolves with the leader.
   */
  async waitForQuorum(options: WaitOptions = {}): Promise<EnsembleMember> {
    const majority = Math.floor(this.#config.size / 2) + 1;
    return this.#pollSurvey('a serving quorum', options, (running, modes) => {
      const serving = running.filter((member) => SERVING_MODES.has(modes[member.id] ?? ''));
      const leaders = serving.filter((member) => modes[member.id] === 'leader');
      return serving.length === running.length && serving.length >= majority && leaders.length === 1 ? leaders[0] : undefined;
    });
  }

  /**
   * The member whose `srvr` says `Mode: leader`, waiting (bounded; default `startTimeoutMs`)
   * until exactly one running member says so — e.g. after the old leader was killed.
   */
  async leader(options: WaitOptions = {}): Promise<EnsembleMember> {
    return this.#pollSurvey('a single leader', options, (running, modes) => {
      const leaders = running.filter((member) => modes[member.id] === 'leader');
      return leaders.length === 1 ? leaders[0] : undefined;
    });
  }

  async #pollSurvey(
    what: string,
    options: WaitOptions,
    decide: (running: readonly EnsembleMember[], modes: Readonly<Record<number, string>>) => EnsembleMember | undefined,
  ): Promise<EnsembleMember> {
    const timeoutMs = options.timeoutMs ?? this.#plans?.[0]?.workspace.timing.startTimeoutMs;
    if (timeoutMs === undefined) {
      throw new HarnessError('INVALID_STATE', `Cannot wait for ${what}: the ensemble was never started`, {
        operation: 'wait',
        state: 'stopped',
      });
    }
    let modes: Record<number, string> = {};
    return pollUntil(
      async () => {
        modes = await this.#survey();
        return decide(
          this.configMembers.filter((member) => member.state === 'running'),
          modes,
        );
      },
      {
        timeoutMs,
        intervalMs: SURVEY_INTERVAL_MS,
        onTimeout: () =>
          new HarnessError('QUORUM_TIMEOUT', `No ${what} within ${timeoutMs} ms; members: ${JSON.stringify(modes)}`, {
            timeoutMs,
            modes,
          }),
      },
    );
  }

  /** Each configured member's `srvr` mode, or why there is none (its state, `not serving`, or the probe's error code). */
  async #survey(): Promise<Record<number, string>> {
    const entries = await Promise.all(
      this.configMembers.map(async (member): Promise<[number, string]> => {
        if (member.state !== 'running') return [member.id, member.state];
        try {
          const status = await member.status({ timeoutMs: SURVEY_PROBE_TIMEOUT_MS });
          return [member.id, status?.mode ?? 'not serving'];
        } catch (error) {
          return [member.id, isHarnessError(error) ? error.code : String(error)];
        }
      }),
    );
    return Object.fromEntries(entries);
  }

  /**
   * Splits the members into `groups` (every member in exactly one): every link between members
   * of different groups is cut both ways, every other link heals. `partition([[1], [2, 3]])`
   * cuts member 1 off. Needs `linkProxies: true`; clients keep reaching every member.
   */
  partition(groups: readonly (readonly number[])[], options: CutOptions = {}): void {
    const links = this.#requireLinks('partition');
    const groupOf = new Map<number, number>();
    groups.forEach((group, index) =>
      group.forEach((id) => {
        this.member(id);
        if (groupOf.has(id)) throw new HarnessError('INVALID_OPTIONS', `Member ${id} is in two groups`, { option: 'groups', value: groups });
        groupOf.set(id, index);
      }),
    );
    if (groupOf.size !== this.#members.length) {
      throw new HarnessError('INVALID_OPTIONS', `Every member must be in a group: ${JSON.stringify(groups)}`, { option: 'groups', value: groups });
    }
    links.heal();
    for (const a of this.#members) {
      for (const b of this.#members) {
        if (a.id < b.id && groupOf.get(a.id) !== groupOf.get(b.id)) links.cut(a.id, b.id, { how: options.how });
      }
    }
  }

  /** Cuts member `id` off from every other member: `partition([[id], others])`. */
  isolate(id: number, options: CutOptions = {}): void {
    this.partition([[id], this.#members.filter((member) => member.id !== id).map((member) => member.id)], options);
  }

  /**
   * Cuts the link between members `from` and `to`, both ways unless `oneWay` (then only what
   * `from` sends to `to` is lost). Adds to the cuts already in place. Needs `linkProxies: true`.
   */
  cutLink(from: number, to: number, options: CutOptions & LinkOptions = {}): void {
    this.#requireLinks('cutLink').cut(from, to, options);
  }

  /** Delays every chunk between `from` and `to` (only from `from` to `to` with `oneWay`) by `latencyMs`; 0 ends it. */
  slowLink(from: number, to: number, latencyMs: number, options: LinkOptions = {}): void {
    this.#requireLinks('slowLink').slow(from, to, latencyMs, options);
  }

  /** Ends every cut and delay between members (connections that lost bytes to a black hole are reset); members redial by themselves. */
  heal(): void {
    this.#requireLinks('heal').heal();
  }

  #requireLinks(operation: string): MemberLinks {
    if (this.#options.linkProxies !== true) {
      throw new HarnessError('INVALID_OPTIONS', `Cannot ${operation}: the ensemble has no link proxies (option linkProxies: true)`, {
        option: 'linkProxies',
        value: this.#options.linkProxies,
      });
    }
    if (this.#links === undefined) {
      throw new HarnessError('INVALID_STATE', `Cannot ${operation}: the ensemble is not started`, {
        operation,
        state: this.#closed ? 'closed' : 'stopped',
      });
    }
    return this.#links;
  }

  /**
   * Starts a new member (`myid` one more than the last) that is not yet in the configuration: its
   * dynamic config lists the current members and itself, so it finds the leader and syncs as a
   * non-voting follower, serving clients. {@link reconfig} `{ add: [member] }` makes it a
   * participant. Needs `reconfigEnabled`.
   */
  async addMember(): Promise<EnsembleMember> {
    this.#requireReconfig('addMember');
    const workspace = this.#workspace!;
    // The id is taken at once, so that members added concurrently get their own.
    const id = this.#members.length + 1;
    const member = this.#newMember(id);
    this.#members.push(member);
    const lines = (ports: MemberPorts): string[] => [...this.#config, id].map((memberId) => memberLine(memberId, memberId === id ? ports : this.#ports[memberId - 1]!));
    await retryOnPortConflict(async () => {
      // The files are written once, and a failed attempt's name its ports: start over without them.
      rmSync(join(workspace.dir, `member-${id}`), { recursive: true, force: true });
      const ports = await allocateMemberPorts(false);
      this.#ports[id - 1] = ports;
      this.#plans![id - 1] = dynamicPlan(this.#options, this.#limits, workspace, id, ports, lines(ports));
      await member.start();
    });
    return member;
  }

  /**
   * One incremental reconfiguration, as the super user: `add` members started by
   * {@link addMember} as participants, `remove` others (which keep running, out of the ensemble,
   * until stopped). Resolves once the ensemble committed it, with the new configuration; from then
   * on {@link connectString}, {@link configMembers}, {@link waitForQuorum} and {@link leader} are
   * about the new members. Bounded by `timeoutMs` (default the start bound).
   */
  async reconfig(change: ReconfigChange, options: WaitOptions = {}): Promise<EnsembleConfig> {
    this.#requireReconfig('reconfig');
    const add = memberIds(change.add, 'add');
    const remove = memberIds(change.remove, 'remove');
    if (add.length + remove.length === 0) throw new HarnessError('INVALID_OPTIONS', 'A reconfig adds or removes at least one member', { option: 'change', value: change });
    for (const id of [...add, ...remove]) this.member(id);
    const timeoutMs = options.timeoutMs ?? this.#timing.startTimeoutMs;
    const joining = add.map((id) => memberLine(id, this.#ports[id - 1]!));
    const config = await runReconfig(this.connectString, this.#superUser!, joining, remove, timeoutMs);
    this.#config = new Set(config.members.map((member) => member.id));
    return config;
  }

  #requireReconfig(operation: string): void {
    if (this.#options.reconfigEnabled !== true) {
      throw new HarnessError('INVALID_OPTIONS', `Cannot ${operation}: the ensemble was started without reconfigEnabled`, {
        option: 'reconfigEnabled',
        value: this.#options.reconfigEnabled,
      });
    }
    if (this.#plans === undefined || this.#closed) {
      throw new HarnessError('INVALID_STATE', `Cannot ${operation}: the ensemble is not started`, { operation, state: this.#closed ? 'closed' : 'stopped' });
    }
  }

  /** Stops every member gracefully (in parallel). Ports and data stay for a later {@link start}. */
  async stop(): Promise<void> {
    await Promise.all(this.#members.map((member) => member.stop()));
  }

  /** Stops every member and deletes the temporary directory. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    await this.stop();
    this.#closed = true;
    await this.#links?.close();
    this.#links = undefined;
    if (this.#workspace !== undefined) await removeTempDir(this.#workspace.dir);
  }

  /** Same as {@link close}, for `await using`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
