import type { HostPort } from './connect-string.js';

/** The hosts of a connect string in a shuffled order, handed out round-robin. */
export class HostList {
  private readonly hosts: HostPort[];
  private index = -1;

  constructor(hosts: readonly HostPort[]) {
    this.hosts = [...hosts];
    // Fisher-Yates: spread clients of one connect string over the ensemble.
    for (let i = this.hosts.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [this.hosts[i], this.hosts[j]] = [this.hosts[j]!, this.hosts[i]!];
    }
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
