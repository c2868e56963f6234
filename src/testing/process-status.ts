import { execFile } from 'node:child_process';
import { HarnessError } from './harness-error.js';
import { HARNESS_OWNER_PROPERTY } from './process-watchdog.js';

const PS_TIMEOUT_MS = 10_000;

/** A live process started by the harness, as seen by `ps`. */
export interface HarnessProcess {
  readonly pid: number;
  /** Pid of the Node.js process that started it (from `-Dzklock.harness.owner=<pid>`). */
  readonly ownerPid: number;
  readonly command: string;
}

interface PsRow {
  readonly pid: number;
  readonly state: string;
  readonly command: string;
}

function ps(args: readonly string[]): Promise<PsRow[]> {
  return new Promise((resolve, reject) => {
    execFile('ps', [...args, '-ww', '-o', 'pid=', '-o', 'stat=', '-o', 'args='], { timeout: PS_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 }, (error, stdout) => {
      // ps exits 1 when `-p <pid>` matches nothing; that is an answer, not a failure.
      if (error !== null && !(error.code === 1 && stdout === '')) {
        reject(new HarnessError('SPAWN_FAILED', `ps failed: ${error.message}`, { command: 'ps', cause: error.message }, { cause: error }));
        return;
      }
      const rows: PsRow[] = [];
      for (const line of stdout.split('\n')) {
        const match = /^\s*(\d+)\s+(\S+)\s+(.*)$/.exec(line);
        if (match?.[1] !== undefined && match[2] !== undefined && match[3] !== undefined) {
          rows.push({ pid: Number(match[1]), state: match[2], command: match[3] });
        }
      }
      resolve(rows);
    });
  });
}


/** The `ps` state of `pid` (`S`, `R`, `T` when stopped, `Z` when a zombie, ...), or undefined if there is none. */
export async function processState(pid: number): Promise<string | undefined> {
  const rows = await ps(['-p', String(pid)]);
  return rows.find((row) => row.pid === pid)?.state;
}

/** True when `pid` is a running process; exited-but-unreaped (zombie) processes count as gone. */
export async function isProcessAlive(pid: number): Promise<boolean> {
  const state = await processState(pid);
  return state !== undefined && !state.startsWith('Z');
}

const OWNER_PATTERN = new RegExp(`-D${HARNESS_OWNER_PROPERTY.replaceAll('.', '\\.')}=(\\d+)(?:\\s|$)`);

/**
 * Lists running processes marked with `-Dzklock.harness.owner=<pid>` — every JVM the harness
 * starts carries it. With `ownerPid`, only that owner's processes (e.g. `process.pid`).
 */
export async function findHarnessProcesses(ownerPid?: number): Promise<HarnessProcess[]> {
  const found: HarnessProcess[] = [];
  for (const row of await ps(['-A'])) {
    const owner = OWNER_PATTERN.exec(row.command)?.[1];
    // A zombie has exited; it only lingers until reaped, which some container inits never do.
    if (owner === undefined || row.state.startsWith('Z')) continue;
    if (ownerPid === undefined || Number(owner) === ownerPid) {
      found.push({ pid: row.pid, ownerPid: Number(owner), command: row.command });
    }
  }
  return found;
}
