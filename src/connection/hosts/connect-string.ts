import { ZooKeeperError } from '../../protocol/index.js';

export interface HostPort {
  host: string;
  port: number;
}

export interface ParsedConnectString {
  hosts: HostPort[];
  /** The chroot prefix without a trailing slash, or '' for none. */
  chroot: string;
}

const DEFAULT_PORT = 2181;

/** Parses `host1:2181,[::1]:2182,host3/optional/chroot`. */
export function parseConnectString(connectString: string): ParsedConnectString {
  const slash = connectString.indexOf('/');
  const hostPart = slash === -1 ? connectString : connectString.slice(0, slash);
  let chroot = slash === -1 ? '' : connectString.slice(slash);
  if (chroot === '/') chroot = '';
  const hosts = hostPart
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
    .map((entry) => parseHost(entry, connectString));
  if (hosts.length === 0) {
    throw new ZooKeeperError('INVALID_ARGUMENT', `connect string has no hosts: "${connectString}"`);
  }
  return { hosts, chroot };
}

/**
 * A host is a name or IPv4 address (letters, digits, '.', '-', '_') or a bracketed IPv6 address
 * (optionally with a zone, `%eth0`): anything else (a space, a stray character) no resolver would find, and
 * is refused at once rather than after the whole connect timeout (ENOTFOUND).
 */
function parseHost(entry: string, whole: string): HostPort {
  const bracketed = /^\[([0-9A-Fa-f:.]+(?:%[\w.-]+)?)\](?::(\d+))?$/.exec(entry);
  const plain = /^([\w.-]+)(?::(\d+))?$/.exec(entry);
  const match = bracketed ?? plain;
  const port = match?.[2] === undefined ? DEFAULT_PORT : Number(match[2]);
  if (!match?.[1] || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new ZooKeeperError('INVALID_ARGUMENT', `bad host "${entry}" in connect string "${whole}"`);
  }
  return { host: match[1], port };
}
