import { fileURLToPath } from 'node:url';
import { curatorProgram } from '../../chaos/peers/java.js';
import type { PeerContention, PeerHerd, PeerLongQueue, PeerResult } from './peer-run.js';
import { runPeer, wireSpec } from './peer-run.js';

const SOURCE = fileURLToPath(new URL('./CuratorBench.java', import.meta.url));
/**
 * As a service would run Curator: the JVM's default collector and both JIT tiers, with a heap
 * that never makes the collector the bottleneck of a few thousand cycles a second.
 */
const JVM_OPTIONS = ['-Xms128m', '-Xmx512m'];

export type CuratorSpec =
  | { scenario: 'mutex'; root: string; ops: number; warmup: number }
  | PeerContention
  | PeerHerd
  | PeerLongQueue;

/** How one run's JVM differs from the usual: options after {@link JVM_OPTIONS} (the last -Xmx wins), and how long it may run. */
export interface CuratorRun {
  jvmOptions?: readonly string[];
  timeoutMs?: number;
}

/** Compiles the Curator side (cached); the reason when it cannot run here (its column is then left empty). */
export async function curatorUnavailable(): Promise<string | undefined> {
  try {
    await curatorProgram(SOURCE, JVM_OPTIONS);
    return undefined;
  } catch (error) {
    return `Curator skipped: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** Runs one scenario in a fresh JVM against `connectString` and parses its JSON line. */
export async function runCurator(connectString: string, spec: CuratorSpec, { jvmOptions = [], timeoutMs }: CuratorRun = {}): Promise<PeerResult> {
  const { file, args } = await curatorProgram(SOURCE, [...JVM_OPTIONS, ...jvmOptions]);
  const specArgs = Object.entries(wireSpec(connectString, spec)).map(([key, value]) => `${key}=${value}`);
  return runPeer(file, [...args, ...specArgs], timeoutMs);
}
