import type { Reader, Stat, Writer } from '../protocol/index.js';
import { isWildcardIp } from '../connection/index.js';
import { readStat } from '../protocol/index.js';
import type { Where } from './validate.js';
import { invalidArgument } from './validate.js';

/** One `server.N` line of the ensemble's dynamic configuration. */
export interface EnsembleMemberConfig {
  /** The member's `myid`. */
  id: number;
  /** `participant` (votes) or `observer` (follows, does not vote). */
  role: 'participant' | 'observer';
  /** Host of its quorum and election ports (the first address when it lists several). */
  host: string;
  quorumPort: number;
  electionPort: number;
  /**
   * Where clients reach it, `host:port`; undefined when the line gives no client port (a
   * configuration written before 3.5, which only the static `clientPort` of each member knows).
   * A wildcard client address (`0.0.0.0`, `::` in any spelling, or a port alone) is reached at `host`.
   */
  clientAddress: string | undefined;
}

/** The ensemble's dynamic configuration, as /zookeeper/config holds it (getConfig, reconfig). */
export interface EnsembleConfig {
  /** The configuration's version (`version=` in hex: the zxid that committed it); 0n when absent. */
  version: bigint;
  members: EnsembleMemberConfig[];
  /** The client addresses of every member that has one, in `myid` order: a connect string (without chroot). */
  connectString: string;
  /** The node's data as the server sent it. */
  text: string;
}

/** The reconfig request (ZooKeeperAdmin.reconfigure): incremental (`joining`/`leaving`) or a whole new member list. */
export interface ReconfigSpec {
  /** Servers to add (or change), each a `server.N=host:quorum:election[:role];[clientHost:]clientPort` line. */
  joining?: readonly string[];
  /** `myid`s of the servers to remove. */
  leaving?: readonly number[];
  /** Non-incremental: the whole new membership, `server.N=...` lines (excludes joining and leaving). */
  members?: readonly string[];
  /** Apply only if the configuration is still this version (else BADVERSION); default: any. */
  fromConfig?: bigint;
}

/** `host:port` or `[v6]:port`, split at the last colon outside brackets. */
function splitHostPort(address: string): [string, string] {
  const at = address.lastIndexOf(':');
  return [address.slice(0, at), address.slice(at + 1)];
}

function port(text: string | undefined): number | undefined {
  if (text === undefined || !/^\d{1,5}$/.test(text)) return undefined;
  const value = Number(text);
  return value > 0 && value < 65536 ? value : undefined;
}

/** A `server.N` value: `host:quorum:election[:role][|more addresses];[clientHost:]clientPort`, or undefined when malformed. */
function parseMember(id: number, value: string): EnsembleMemberConfig | undefined {
  const [serverPart = '', clientPart] = value.split(';', 2).map((part) => part.trim());
  const first = serverPart.split('|')[0]!;
  // [v6]:q:e[:role] or host:q:e[:role]
  const match = /^(\[[^\]]*\]|[^:]+):(\d+):(\d+)(?::(participant|observer))?$/.exec(first);
  if (!match) return undefined;
  const [, host = '', quorumText, electionText, role] = match;
  const quorumPort = port(quorumText);
  const electionPort = port(electionText);
  if (quorumPort === undefined || electionPort === undefined) return undefined;
  let clientAddress: string | undefined;
  if (clientPart !== undefined && clientPart !== '') {
    const [clientHost = '', portText] = clientPart.includes(':') ? splitHostPort(clientPart) : ['', clientPart];
    const clientPort = port(portText);
    if (clientPort === undefined) return undefined;
    // ZooKeeper writes the address as Java prints it (:: as [0:0:0:0:0:0:0:0]): parsed, not matched as text.
    clientAddress = `${clientHost === '' || isWildcardIp(clientHost) ? host : clientHost}:${clientPort}`;
  }
  return { id, role: role === 'observer' ? 'observer' : 'participant', host, quorumPort, electionPort, clientAddress };
}

/**
 * Parses the data of /zookeeper/config (`server.N=...` lines, `version=<hex>`). Lines it does not
 * know (a future key, a malformed member) are skipped rather than failing the whole config: a
 * client following the ensemble must still see the members it can read.
 */
export function parseEnsembleConfig(data: Buffer | string): EnsembleConfig {
  const text = typeof data === 'string' ? data : data.toString('utf8');
  const members: EnsembleMemberConfig[] = [];
  let version = 0n;
  for (const line of text.split(/\r?\n/)) {
    const eq = line.indexOf('=');
    if (eq < 0) continue;
    const key = line.slice(0, eq).trim();
    const value = line.slice(eq + 1).trim();
    if (key === 'version' && /^[0-9a-fA-F]{1,16}$/.test(value)) version = BigInt(`0x${value}`);
    const id = /^server\.(\d+)$/.exec(key)?.[1];
    const member = id === undefined ? undefined : parseMember(Number(id), value);
    if (member) members.push(member);
  }
  members.sort((a, b) => a.id - b.id);
  const connectString = members.flatMap((m) => (m.clientAddress === undefined ? [] : [m.clientAddress])).join(',');
  return { version, members, connectString, text };
}

/** The comma-separated list a ReconfigRequest carries, or null (absent) for none; commas inside an entry are refused. */
function list(values: readonly (string | number)[] | undefined, name: string, where: Where): string | null {
  if (values === undefined) return null;
  if (!Array.isArray(values)) invalidArgument(name, 'an array', values, where);
  const entries = values.map((value) => {
    if (name === 'leaving' ? !Number.isSafeInteger(value) || (value as number) <= 0 : typeof value !== 'string' || !/^server\.\d+=[^,\n]+$/.test(value)) {
      invalidArgument(name, name === 'leaving' ? 'positive server ids' : '"server.N=host:quorum:election[:role];[host:]clientPort" lines', value, where);
    }
    return String(value);
  });
  return entries.length === 0 ? null : entries.join(',');
}

/** ReconfigRequest {ustring joiningServers; ustring leavingServers; ustring newMembers; long curConfigId}, checked. */
export function reconfigWriter(spec: ReconfigSpec, where: Where): (w: Writer) => void {
  if (typeof spec !== 'object' || spec === null) invalidArgument('spec', 'an object { joining?, leaving?, members?, fromConfig? }', spec, where);
  const joining = list(spec.joining, 'joining', where);
  const leaving = list(spec.leaving, 'leaving', where);
  const members = list(spec.members, 'members', where);
  if (members !== null && (joining !== null || leaving !== null)) invalidArgument('members', 'no joining or leaving with it (a whole new membership)', spec.members, where);
  if (members === null && joining === null && leaving === null) invalidArgument('spec', 'joining, leaving or members', spec, where);
  const from = spec.fromConfig ?? -1n;
  if (typeof from !== 'bigint' || from < -1n) invalidArgument('fromConfig', 'a config version (bigint)', spec.fromConfig, where);
  return (w) => w.string(joining).string(leaving).string(members).long(from);
}

/** reconfig's reply, a GetDataResponse with the new configuration. */
export function readReconfigResult(r: Reader): { config: EnsembleConfig; stat: Stat } {
  const data = r.buffer() ?? Buffer.alloc(0);
  return { config: parseEnsembleConfig(data), stat: readStat(r) };
}

/** getConfig's reply: the node's data and stat as getData's, and the config they hold, typed. */
export interface ConfigResult {
  data: Buffer;
  stat: Stat;
  config: EnsembleConfig;
}

/** Reads getConfig's reply (a getData reply) with its config parsed. */
export function readConfigResult(r: Reader): ConfigResult {
  const data = r.buffer() ?? Buffer.alloc(0);
  return { data, stat: readStat(r), config: parseEnsembleConfig(data) };
}
