import type { BenchConfig } from './config.js';

/** What every scenario needs: the server, the knobs, and where to put its nodes. */
export interface Bench {
  readonly config: BenchConfig;
  readonly connectString: string;
  /** The server's plain client port, for four-letter words. */
  readonly fourLetterWord: (word: string) => Promise<string>;
  /** The server JVM's pid, for its CPU time (server-traffic.ts). */
  readonly serverPid: number | undefined;
  /** Every scenario creates its nodes under here, in a subtree of its own per peer, so none collide. */
  readonly root: string;
  /** False when the kazoo side is skipped (flag, or Python/kazoo missing). */
  readonly kazoo: boolean;
  /** False when the Curator side is skipped (flag, or no JDK or Curator jars). */
  readonly curator: boolean;
  readonly log: (line: string) => void;
}
