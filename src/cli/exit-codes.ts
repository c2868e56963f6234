/**
 * Every exit code of `zklock`, in one place so `--help`, the README and the code agree.
 * The 7x codes follow BSD sysexits where one fits; 124 is coreutils' `timeout` code for "the
 * command ran too long" (sysexits has no such meaning, and its 76 means a protocol error);
 * 126/127/128+N follow the shell's conventions, so `zklock exec` is transparent to scripts that
 * already understand them.
 */
export const EXIT = {
  /** Done (for `exec`: the child's own code is passed through instead). */
  OK: 0,
  /** A check failed (`demo`), a path does not exist, or another error the message explains. */
  FAILURE: 1,
  /** Bad usage: unknown option, missing argument, invalid value, or confirmation refused. */
  USAGE: 2,
  /** ZooKeeper could not be reached, or the session ended, within the bounds given. */
  UNAVAILABLE: 69,
  /** `--try`: the lock is held by someone else; nothing was run. */
  LOCK_TAKEN: 73,
  /** `--timeout`: the lock was not acquired in time; nothing was run. */
  TIMEOUT: 74,
  /** The lock was lost while the command ran; the command was terminated. */
  LOCK_LOST: 75,
  /** `--max-hold`: the command held the lock too long and was terminated. */
  HOLD_EXPIRED: 124,
  /** ZooKeeper refused our credentials or the ACL denies access (NOAUTH / AUTHFAILED). */
  NOT_AUTHORIZED: 77,
  /** The command could not be executed (permission denied). */
  CANNOT_EXECUTE: 126,
  /** The command was not found. */
  NOT_FOUND: 127,
  /** 128 + N: interrupted by signal N while waiting (130 for SIGINT), or the command died of it. */
  SIGNAL_BASE: 128,
} as const;

/**
 * Which codes a command can end with: `exec` (its command's codes and the lock's), the commands
 * that talk to ZooKeeper (`status`, `ls`, `ui`, `revoke`, `release`), and the local ones that
 * start their own servers (`server`, `demo`), which never connect to a given ensemble. The
 * top-level `--help` shows every row; a command's shows only what it can return, so a reader of
 * `zklock status --help` is not told about `--max-hold`.
 */
export type ExitScope = 'exec' | 'zookeeper' | 'local';

const ROWS: readonly { code: string; meaning: string; scopes: readonly (ExitScope | 'all')[] }[] = [
  { code: '0', meaning: 'success (exec: the command\'s own exit code is passed through)', scopes: ['all', 'exec'] },
  { code: '0', meaning: 'success', scopes: ['zookeeper', 'local'] },
  { code: '1', meaning: 'failure explained on stderr (e.g. a demo check failed, no such path)', scopes: ['all'] },
  { code: '1', meaning: 'failure explained on stderr (e.g. no such path)', scopes: ['exec', 'zookeeper'] },
  { code: '1', meaning: 'failure explained on stderr (e.g. a demo check failed, no Java or ZooKeeper)', scopes: ['local'] },
  { code: '2', meaning: 'usage error, or confirmation refused', scopes: ['all', 'zookeeper'] },
  { code: '2', meaning: 'usage error', scopes: ['exec', 'local'] },
  { code: '69', meaning: 'ZooKeeper unreachable, or the session ended', scopes: ['all', 'exec', 'zookeeper'] },
  { code: '73', meaning: 'exec --try: the lock is taken; nothing was run', scopes: ['all', 'exec'] },
  { code: '74', meaning: 'exec --timeout: the lock was not acquired in time; nothing was run', scopes: ['all', 'exec'] },
  { code: '75', meaning: 'exec: the lock was lost while the command ran; it was terminated', scopes: ['all', 'exec'] },
  { code: '77', meaning: 'not authorized (bad credentials or ACL)', scopes: ['all', 'exec', 'zookeeper'] },
  { code: '124', meaning: 'exec --max-hold: the command held the lock too long; it was terminated', scopes: ['all', 'exec'] },
  { code: '126/127', meaning: 'exec: the command cannot be executed / was not found', scopes: ['all', 'exec'] },
  { code: '128+N', meaning: 'interrupted by signal N while waiting, or the command died of signal N', scopes: ['all', 'exec'] },
  { code: '128+N', meaning: 'interrupted by signal N', scopes: ['zookeeper'] },
  { code: '128+N', meaning: 'interrupted by signal N (server: SIGINT and SIGTERM stop it with 0)', scopes: ['local'] },
];

/** The exit-code table printed after `--help`: every row for `zklock --help`, a command's own rows otherwise. */
export function exitCodesHelp(scope: ExitScope | 'all'): string {
  const rows = ROWS.filter((row) => row.scopes.includes(scope)).map((row) => `  ${row.code.padEnd(9)}${row.meaning}`);
  return ['Exit codes:', ...rows].join('\n');
}
