import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { Option } from 'commander';
import type { ClientOptions } from '../client/index.js';
import { DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_SESSION_TIMEOUT_MS } from '../client/durations.js';
import { ZooKeeperClient, ZooKeeperError, isZooKeeperError } from '../client/index.js';
import { CliError, messageOf } from './cli-error.js';
import { EXIT } from './exit-codes.js';
import type { AuthEntry } from './parse-values.js';
import { parseAuth, parsePositiveDuration } from './parse-values.js';
import type { ForwardedSignal } from './signals.js';
import { interrupted, interruptSignal } from './signals.js';
import { bounded, formatAge } from './timing.js';

export const DEFAULT_CONNECT = '127.0.0.1:2181';

/** The options every command that talks to ZooKeeper shares. */
export interface ConnectionFlags {
  connect: string;
  sessionTimeout: number;
  connectTimeout: number;
  auth?: AuthEntry[];
  tls?: boolean;
  tlsCa?: string;
  tlsCert?: string;
  tlsKey?: string;
  tlsInsecure?: boolean;
}

/**
 * The --connect-timeout of the commands that answer and exit (status, ls, release, revoke, ui):
 * a host that refuses or does not resolve is reported at once anyway, and an operator asking
 * "who holds it?" wants "unreachable" in seconds. exec, which waits for a lock anyway, keeps the
 * library's request timeout.
 */
export const QUICK_CONNECT_TIMEOUT_MS = 5000;

export function addConnectionOptions(command: Command, connectTimeout = DEFAULT_REQUEST_TIMEOUT_MS): Command {
  return command
    .addOption(
      new Option('-c, --connect <hosts>', 'ZooKeeper connect string, e.g. zk1:2181,zk2:2181/chroot')
        .env('ZOOKEEPER_CONNECT')
        .default(DEFAULT_CONNECT),
    )
    // The library's own defaults, so the CLI and a program using the API behave alike.
    .addOption(new Option('--session-timeout <duration>', 'session timeout to ask for').argParser(parsePositiveDuration).default(DEFAULT_SESSION_TIMEOUT_MS, `${DEFAULT_SESSION_TIMEOUT_MS / 1000}s`))
    .addOption(
      new Option('--connect-timeout <duration>', 'give up when no server accepts a session within this time')
        .argParser(parsePositiveDuration)
        .default(connectTimeout, `${connectTimeout / 1000}s`),
    )
    .addOption(new Option('--auth <scheme:credentials>', 'authenticate, e.g. digest:user:pass (repeatable)').argParser(parseAuth))
    .option('--tls', 'connect over TLS (implied by the other --tls-* options)')
    .option('--tls-ca <file>', 'PEM file of the CA(s) to trust for the servers\' certificates')
    .option('--tls-cert <file>', 'PEM client certificate (for servers that require one)')
    .option('--tls-key <file>', 'PEM key of the client certificate')
    .option('--tls-insecure', 'do not verify the servers\' certificates (testing only)');
}

function readPem(file: string, what: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new CliError(`cannot read the ${what} file "${file}": ${messageOf(error)}`, EXIT.USAGE);
  }
}

export function clientOptions(flags: ConnectionFlags): ClientOptions {
  const options: ClientOptions = { sessionTimeout: flags.sessionTimeout };
  if (flags.auth) options.auth = flags.auth;
  if (flags.tls || flags.tlsCa || flags.tlsCert || flags.tlsKey || flags.tlsInsecure) {
    options.tls = {
      ...(flags.tlsCa ? { ca: readPem(flags.tlsCa, '--tls-ca') } : {}),
      ...(flags.tlsCert ? { cert: readPem(flags.tlsCert, '--tls-cert') } : {}),
      ...(flags.tlsKey ? { key: readPem(flags.tlsKey, '--tls-key') } : {}),
      ...(flags.tlsInsecure ? { rejectUnauthorized: false } : {}),
    };
  }
  return options;
}

/**
 * Connects, bounded by --connect-timeout and by `signal` (Ctrl-C). The client retries failed
 * connections by itself: each new cause (refused, DNS, TLS) is said on stderr as it happens, so
 * the wait is never silent, and the TIMEOUT carries the last one.
 */
export async function connectClient(flags: ConnectionFlags, signal?: AbortSignal): Promise<ZooKeeperClient> {
  // Outside the try: a bad flag (an unreadable --tls-ca) is a usage error, not an outage.
  const options = clientOptions(flags);
  let client: ZooKeeperClient | undefined;
  let told: string | undefined;
  const tell = (error: Error): void => {
    const text = messageOf(error);
    if (text !== told) process.stderr.write(`zklock: ${text}; retrying for at most ${formatAge(flags.connectTimeout)} (--connect-timeout)\n`);
    told = text;
  };
  try {
    client = new ZooKeeperClient(flags.connect, options);
    client.on('connectionError', tell);
    await client.waitForConnected({ timeout: flags.connectTimeout, signal });
    return client;
  } catch (error) {
    await client?.close();
    if (signal?.aborted) throw signal.reason;
    // A connect string the client refuses (a port that is no number) is the user's to fix, as before connecting.
    if (isZooKeeperError(error, 'INVALID_ARGUMENT') || isZooKeeperError(error, 'INVALID_PATH')) throw error;
    // Refused credentials are not an outage: retrying cannot help, and scripts must tell them apart.
    if (isZooKeeperError(error, 'AUTHFAILED')) throw new CliError(`ZooKeeper at ${flags.connect} refused the credentials: ${messageOf(error)}`, EXIT.NOT_AUTHORIZED);
    throw new CliError(`cannot connect to ZooKeeper at ${flags.connect}: ${messageOf(error)}`, EXIT.UNAVAILABLE);
  } finally {
    client?.off('connectionError', tell);
  }
}

/**
 * A chroot that does not exist fails as exec fails on it (CHROOT_MISSING, exit 1): under it
 * every path is missing, and "no lock at /x" or an empty list would blame the lock, not the
 * connect string. One exists() on the chroot itself, only when there is one.
 */
async function checkChroot(client: ZooKeeperClient, signal: AbortSignal): Promise<void> {
  if (!client.chroot || (await client.exists('/', { signal })) !== null) return;
  throw new ZooKeeperError('CHROOT_MISSING', `the chroot ${client.chroot} of the connect string does not exist: create it (connected without the chroot) or fix the connect string`, { op: 'connect', path: client.chroot });
}

/** Closes the session (removing our ephemeral nodes at once), but never waits longer than `ms` for an unreachable server. */
export async function closeClient(client: ZooKeeperClient, ms = 3000): Promise<void> {
  await bounded(client.close().catch(() => undefined), ms);
}

/**
 * Runs `fn` with a connected client that is closed afterwards; Ctrl-C (or SIGTERM/SIGHUP) aborts
 * the signal handed to `fn` and the command exits 128+N instead of hanging on a slow server.
 */
export async function withClient(
  flags: ConnectionFlags,
  fn: (client: ZooKeeperClient, signal: AbortSignal, received: () => ForwardedSignal | undefined) => Promise<number | void>,
): Promise<number> {
  using interrupt = interruptSignal();
  let client: ZooKeeperClient | undefined;
  try {
    client = await connectClient(flags, interrupt.signal);
    await checkChroot(client, interrupt.signal);
    return (await fn(client, interrupt.signal, interrupt.received)) ?? EXIT.OK;
  } catch (error) {
    const by = interrupt.received();
    if (by) return interrupted(by, client ? 'waiting for ZooKeeper' : `connecting to ${flags.connect}`);
    throw error;
  } finally {
    if (client) await closeClient(client);
  }
}
