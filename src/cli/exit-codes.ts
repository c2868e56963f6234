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

/** The table printed after every command's `--help`. */
export const EXIT_CODES_HELP = `Exit codes:
  0        success (exec: the command's own exit code is passed through)
  1        failure explained on stderr (e.g. a demo check failed, no such path)
  2        usage error, or confirmation refused
  69       ZooKeeper unreachable, or the session ended
  73       exec --try: the lock is taken; nothing was run
  74       exec --timeout: the lock was not acquired in time; nothing was run
  75       exec: the lock was lost while the command ran; it was terminated
  77       not authorized (bad credentials or ACL)
  124      exec --max-hold: the command held the lock too long; it was terminated
  126/127  exec: the command cannot be executed / was not found
  128+N    interrupted by signal N while waiting, or the command died of signal N`;
