import type { ZooKeeperClient } from '../index.js';
import { ZooKeeperError, joinPath } from '../index.js';
import { CliError } from './cli-error.js';
import { EXIT } from './exit-codes.js';
import { inspectLockAt } from './semaphore-layout.js';

/**
 * The path of a contender of the lock at `lockPath` named as `status` names it (its node name,
 * which for a semaphore's lease lies one level down, in `leases/`) or by its full path, which
 * must be one of this lock's. A name not among the contenders now is taken as a child of the
 * lock path: the caller then says it does not exist (released meanwhile).
 */
export async function contenderPath(client: ZooKeeperClient, lockPath: string, node: string): Promise<string> {
  if (node.startsWith('/')) {
    const under = lockPath === '/' ? '/' : `${lockPath}/`;
    const rest = node.startsWith(under) ? node.slice(under.length) : '';
    // The lock's own child, or a semaphore's leases/ or locks/ child: nothing deeper or elsewhere.
    if (!/^(?:(?:leases|locks)\/)?[^/]+$/.test(rest)) throw new CliError(`${node} is not a contender of the lock ${lockPath}`, EXIT.USAGE);
    return node;
  }
  if (node.includes('/')) throw new CliError(`expected a contender's node name (as \`zklock status\` shows it) or its full path, got ${node}`, EXIT.USAGE);
  let contenders;
  try {
    const state = await inspectLockAt(client, lockPath);
    contenders = [...state.holders, ...state.waiters];
  } catch (error) {
    if (error instanceof ZooKeeperError && error.code === 'NONODE') throw new CliError(`no lock at ${lockPath}`, EXIT.FAILURE);
    throw error;
  }
  return contenders.find((c) => c.name === node)?.path ?? joinPath(lockPath, node);
}
