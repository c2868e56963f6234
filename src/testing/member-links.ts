import { electionAddressRewriter } from './election-handshake.js';
import { FaultProxy } from './fault-proxy.js';
import { HarnessError } from './harness-error.js';
import { LOOPBACK } from './loopback-ports.js';

/** A member's real quorum (follower → leader) and leader-election ports. */
export interface PeerPorts {
  readonly quorum: number;
  readonly election: number;
}

/** How {@link ZooKeeperEnsemble.cutLink} and {@link ZooKeeperEnsemble.partition} cut a link. */
export interface CutOptions {
  /**
   * `blackhole` (default): bytes are dropped, connections stay open and new ones are accepted
   * but hear nothing — a network partition; members notice only by their own timeouts.
   * `reset`: current connections get a TCP RST and new ones are reset on arrival — a peer
   * that is plainly unreachable, noticed at once.
   */
  readonly how?: 'blackhole' | 'reset';
}

/** Options for {@link ZooKeeperEnsemble.cutLink} and {@link ZooKeeperEnsemble.slowLink}. */
export interface LinkOptions {
  /** Only the traffic from `from` to `to`; the way back keeps working. Default false (both ways). */
  readonly oneWay?: boolean;
}

/** One member's two proxies towards one peer: it dials the peer's quorum and election ports through them. */
interface DirectedLink {
  readonly quorum: FaultProxy;
  readonly election: FaultProxy;
}

function key(from: number, to: number): string {
  return `${from}>${to}`;
}

/**
 * A {@link FaultProxy} on every directed member-to-member link of an ensemble: member `i`'s
 * zoo.cfg names, for each peer `j`, the proxies "i→j" instead of `j`'s ports, so whatever `i`
 * dials — a follower's connection to its leader, either side's election connection — crosses
 * them. Bytes from `i` to `j` flow upstream on "i→j" and downstream on "j→i"; a cut or a delay of
 * one direction of traffic sets both.
 */
export class MemberLinks {
  readonly #links: ReadonlyMap<string, DirectedLink>;
  /** Proxies that black-holed a direction since the last heal: their connections have lost bytes. */
  readonly #holed = new Set<FaultProxy>();

  private constructor(links: ReadonlyMap<string, DirectedLink>) {
    this.#links = links;
  }

  /** Starts the proxies for members 1..n with `peers[id - 1]`'s real ports; on failure none is left open. */
  static async start(peers: readonly PeerPorts[]): Promise<MemberLinks> {
    const links = new Map<string, DirectedLink>();
    const electionAddressBack = (from: number, to: number): string => `${LOOPBACK}:${links.get(key(to, from))?.election.port ?? 0}`;
    try {
      for (const [fromIndex] of peers.entries()) {
        for (const [toIndex, target] of peers.entries()) {
          if (fromIndex === toIndex) continue;
          const [from, to] = [fromIndex + 1, toIndex + 1];
          links.set(key(from, to), {
            quorum: await FaultProxy.start({ targetPort: target.quorum }),
            election: await FaultProxy.start({
              targetPort: target.election,
              // Read at connection time, when every proxy exists.
              rewriteUpstream: () => electionAddressRewriter(electionAddressBack(from, to)),
            }),
          });
        }
      }
    } catch (error) {
      await closeAll(links.values());
      throw error;
    }
    return new MemberLinks(links);
  }

  /** The `host:quorumPort:electionPort` that member `from`'s zoo.cfg gives for peer `to`. */
  serverAddress(from: number, to: number): string {
    const link = this.#link(from, to);
    return `${LOOPBACK}:${link.quorum.port}:${link.election.port}`;
  }

  /** Cuts the traffic between `a` and `b` (from `a` to `b` only with `oneWay`). */
  cut(a: number, b: number, options: CutOptions & LinkOptions): void {
    if (options.how === 'reset') {
      if (options.oneWay === true) {
        throw new HarnessError('INVALID_OPTIONS', 'A reset cuts both ways; a one-way cut black-holes', { option: 'oneWay', value: true });
      }
      for (const proxy of [...this.#proxies(a, b), ...this.#proxies(b, a)]) {
        proxy.refuseNew();
        proxy.resetAll();
      }
      return;
    }
    for (const [from, to] of this.#ways(a, b, options)) {
      for (const proxy of this.#proxies(from, to)) proxy.blackhole('upstream');
      for (const proxy of this.#proxies(to, from)) proxy.blackhole('downstream');
      for (const proxy of [...this.#proxies(from, to), ...this.#proxies(to, from)]) this.#holed.add(proxy);
    }
  }

  /** Delays every chunk between `a` and `b` (from `a` to `b` only with `oneWay`) by `latencyMs`. */
  slow(a: number, b: number, latencyMs: number, options: LinkOptions): void {
    for (const [from, to] of this.#ways(a, b, options)) {
      for (const proxy of this.#proxies(from, to)) proxy.latency('upstream', latencyMs);
      for (const proxy of this.#proxies(to, from)) proxy.latency('downstream', latencyMs);
    }
  }

  /**
   * Every link back to faithful forwarding; members redial what a cut closed. A connection that
   * lost bytes to a black hole is reset here, as if its ends had timed out: a real network delays
   * a TCP stream's bytes but never loses some from its middle, so resuming it would hand a member
   * a torn message no partition can produce.
   */
  heal(): void {
    for (const link of this.#links.values()) {
      link.quorum.passThrough();
      link.election.passThrough();
    }
    for (const proxy of this.#holed) proxy.resetAll();
    this.#holed.clear();
  }

  async close(): Promise<void> {
    await closeAll(this.#links.values());
  }

  #ways(a: number, b: number, options: LinkOptions): readonly (readonly [number, number])[] {
    return options.oneWay === true ? [[a, b]] : [[a, b], [b, a]];
  }

  #proxies(from: number, to: number): readonly FaultProxy[] {
    const link = this.#link(from, to);
    return [link.quorum, link.election];
  }

  #link(from: number, to: number): DirectedLink {
    const link = this.#links.get(key(from, to));
    if (link === undefined) {
      throw new HarnessError('INVALID_OPTIONS', `No link from member ${from} to member ${to}`, { option: 'link', value: [from, to] });
    }
    return link;
  }
}

async function closeAll(links: Iterable<DirectedLink>): Promise<void> {
  await Promise.all([...links].flatMap((link) => [link.quorum.close(), link.election.close()]));
}
