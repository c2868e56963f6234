import { lookup } from 'node:dns/promises';
import type { HostPort } from './connect-string.js';
import { canonicalIp } from './ip.js';

/** The addresses each host string of a server list stands for; a host absent from it, or with none, is compared by its string. */
export type AddressBook = ReadonlyMap<string, readonly string[]>;

/**
 * The book for `hosts` without a lookup, or undefined when one of them is a name. A list of
 * addresses (what a dynamic config holds) is compared at once, and the same address spelled two
 * ways (`::1`, `0:0:0:0:0:0:0:1`) is one server.
 */
export function literalAddresses(hosts: readonly HostPort[]): AddressBook | undefined {
  const book = new Map<string, readonly string[]>();
  for (const { host } of hosts) {
    const ip = canonicalIp(host);
    if (ip === undefined) return undefined;
    book.set(host, [ip]);
  }
  return book;
}

/**
 * Resolves each distinct host of `hosts` once (IP literals as they are), in parallel, for at most
 * `timeoutMs`: a name that does not resolve in time, or at all, gets no address and is compared by
 * its string, as before (the lookup cannot be cancelled; its late answer is dropped).
 */
export async function resolveAddresses(hosts: readonly HostPort[], timeoutMs: number): Promise<AddressBook> {
  const names = [...new Set(hosts.map((h) => h.host))];
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, timeoutMs, undefined);
    timer.unref();
  });
  try {
    const entries = await Promise.all(
      names.map(async (name): Promise<[string, readonly string[]]> => {
        const ip = canonicalIp(name);
        if (ip !== undefined) return [name, [ip]];
        const found = await Promise.race([lookup(name, { all: true }).catch(() => undefined), timedOut]);
        return [name, (found ?? []).flatMap((a) => canonicalIp(a.address) ?? [])];
      }),
    );
    return new Map(entries);
  } finally {
    clearTimeout(timer);
  }
}

/** Same server: the same port, and the same host string or a shared address. */
export function sameServer(a: HostPort, b: HostPort, book: AddressBook): boolean {
  if (a.port !== b.port) return false;
  if (a.host === b.host) return true;
  const mine = book.get(a.host);
  const theirs = book.get(b.host);
  return mine !== undefined && theirs !== undefined && mine.some((ip) => theirs.includes(ip));
}
