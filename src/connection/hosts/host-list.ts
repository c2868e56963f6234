import type { AddressBook } from './addresses.js';
import { sameServer } from './addresses.js';
import type { HostPort } from './connect-string.js';

/** The hosts of a connect string in a shuffled order, handed out round-robin. */
export class HostList {
  private hosts: HostPort[];
  private index = -1;
  /** The addresses of the hosts of the last update (and of the server it was on): `localhost` and `127.0.0.1` are one server. */
  private book: AddressBook = new Map();

  constructor(hosts: readonly HostPort[]) {
    this.hosts = shuffled(hosts);
  }

  /**
   * Replaces the list (Java's StaticHostProvider.updateServerList) and tells whether the client
   * should leave `current` (the server it is connected to, if any) so that the load spreads over
   * the new list: it must when `current` is not in it; it may when the list grew, with
   * probability 1 − old size / new size, and then goes to a server new to the list. Moving
   * because `current` went, it picks a new server with Java's probability pNew and one of the
   * remaining old ones otherwise, so that the clients of the removed servers spread evenly.
   * Servers are compared by `book` (the addresses of the old and new hosts and of `current`):
   * a server named by another name or spelling of its address is still listed.
   */
  update(hosts: readonly HostPort[], current: HostPort | undefined, book: AddressBook): boolean {
    const next = shuffled(hosts);
    const mine = current ?? this.hosts[Math.max(this.index, 0)];
    this.book = book;
    const same = (a: HostPort, b: HostPort | undefined): boolean => b !== undefined && sameServer(a, b, book);
    const kept = next.filter((h) => this.hosts.some((o) => same(h, o)));
    const fresh = next.filter((h) => !kept.includes(h));
    const oldSize = this.hosts.length;
    const stays = next.some((h) => same(h, mine));
    let pNew: number;
    if (next.length > oldSize) {
      if (stays && Math.random() > 1 - oldSize / next.length) pNew = -1;
      else pNew = 1;
    } else if (stays) {
      pNew = -1;
    } else {
      // Java's pOld: the share of the removed servers' clients the remaining old servers take.
      const pOld = (kept.length * (oldSize - next.length)) / (next.length * (oldSize - kept.length));
      pNew = 1 - pOld;
    }
    this.hosts = next;
    if (pNew < 0) {
      this.index = Math.max(next.findIndex((h) => same(h, mine)), -1);
      return false;
    }
    const pool = (fresh.length > 0 && Math.random() < pNew) || kept.length === 0 ? fresh : kept.filter((h) => !same(h, mine));
    const target = pool.length > 0 ? pool[Math.floor(Math.random() * pool.length)]! : next[0]!;
    // next() hands out `target` first, then goes round the list from there.
    this.index = next.indexOf(target) - 1;
    return true;
  }

  /** True when `host` is in the list (by port, and host or address). */
  has(host: HostPort): boolean {
    return this.hosts.some((h) => sameServer(h, host, this.book));
  }

  /** The hosts in the list now. */
  get all(): readonly HostPort[] {
    return this.hosts;
  }

  get size(): number {
    return this.hosts.length;
  }

  next(): HostPort {
    this.index = (this.index + 1) % this.hosts.length;
    return this.hosts[this.index]!;
  }

  /** Every host but `current`, in the list's order starting after it: where to look for a read/write server. */
  others(current: HostPort): HostPort[] {
    const at = this.hosts.indexOf(current);
    return at < 0 ? [...this.hosts] : [...this.hosts.slice(at + 1), ...this.hosts.slice(0, at)];
  }

  /** True when the last host handed out ends a full pass over the list. */
  get endOfPass(): boolean {
    return this.index === this.hosts.length - 1;
  }
}

/** Fisher-Yates: spread clients of one connect string over the ensemble. */
function shuffled(hosts: readonly HostPort[]): HostPort[] {
  const out = [...hosts];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
