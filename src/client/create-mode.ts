import { CreateFlag } from '../protocol/index.js';

export type CreateMode = keyof typeof CreateFlag;

export function createFlags(mode: CreateMode = 'PERSISTENT'): number {
  return CreateFlag[mode];
}

export function isSequential(flags: number): boolean {
  return (
    flags === CreateFlag.PERSISTENT_SEQUENTIAL ||
    flags === CreateFlag.EPHEMERAL_SEQUENTIAL ||
    flags === CreateFlag.PERSISTENT_SEQUENTIAL_WITH_TTL
  );
}
