import { isIP } from 'node:net';

/**
 * One spelling per IP address (IPv6 compressed and lower-case, as the WHATWG URL parser writes
 * it: ZooKeeper prints `::1` as `0:0:0:0:0:0:0:1`), or undefined when `host` is a name. Takes a
 * bracketed IPv6 address too.
 */
export function canonicalIp(host: string): string | undefined {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const family = isIP(bare);
  if (family === 4) return bare;
  if (family === 6) return new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  return undefined;
}

/** True for the address that means "every interface": 0.0.0.0, ::, and any other spelling of them (an IPv4-mapped ::ffff:0.0.0.0 too, as Java reads it). */
export function isWildcardIp(host: string): boolean {
  const ip = canonicalIp(host);
  return ip === '0.0.0.0' || ip === '::' || ip === '::ffff:0:0';
}
