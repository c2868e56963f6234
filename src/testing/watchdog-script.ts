/**
 * Source of the watchdog helper, run as `node -e WATCHDOG_SCRIPT <owner property> <owner pid>`.
 *
 * It is a plain CommonJS string rather than a module of ours because it must run unchanged
 * from `src/` under tsx and from `dist/` after a build, with no loader and no file to locate.
 *
 * Protocol: JSON lines on stdin, `{"op":"pid+"|"pid-"|"dir+"|"dir-","value":...}`. The owner
 * holds the only write end of that pipe, so EOF means the owner is gone — however it died,
 * SIGKILL included. Then the watchdog SIGKILLs every registered JVM that still carries the
 * owner's marker on its command line (so a recycled pid is never hit), waits for them to be
 * gone (zombies count as gone: a container's init may never reap them) and removes the
 * registered directories.
 */
export const WATCHDOG_SCRIPT = String.raw`
'use strict';
const { existsSync, readFileSync, rmSync } = require('node:fs');
const [, ownerProperty, ownerPid] = process.argv;
const marker = '-D' + ownerProperty + '=' + ownerPid;
process.title = 'zklock-watchdog ' + ownerPid;
const pids = new Set();
const dirs = new Set();
const hasProc = existsSync('/proc/self/cmdline');

function apply(line) {
  if (line === '') return;
  const { op, value } = JSON.parse(line);
  if (op === 'pid+') pids.add(value);
  else if (op === 'pid-') pids.delete(value);
  else if (op === 'dir+') dirs.add(value);
  else if (op === 'dir-') dirs.delete(value);
}

function carriesMarker(pid) {
  if (!hasProc) return true;
  try {
    return readFileSync('/proc/' + pid + '/cmdline', 'utf8').split('\0').includes(marker);
  } catch {
    return false;
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  if (!hasProc) return true;
  try {
    return !/^\d+ \(.*\) Z/s.test(readFileSync('/proc/' + pid + '/stat', 'utf8'));
  } catch {
    return false;
  }
}

let cleaning = false;
function cleanUp() {
  if (cleaning) return;
  cleaning = true;
  const victims = [...pids].filter(carriesMarker);
  for (const pid of victims) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
  const deadline = Date.now() + 10000;
  const removeWhenGone = () => {
    if (victims.some(alive) && Date.now() < deadline) {
      setTimeout(removeWhenGone, 50);
      return;
    }
    for (const dir of dirs) {
      try {
        rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
      } catch {}
    }
    process.exit(0);
  };
  removeWhenGone();
}

let pending = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  const lines = (pending + chunk).split('\n');
  pending = lines.pop();
  lines.forEach(apply);
});
process.stdin.on('end', cleanUp);
process.stdin.on('error', cleanUp);
`;
