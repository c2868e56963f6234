import { constants } from 'node:os';
import { InvalidArgumentError } from 'commander';
import { MAX_TIMER_MS } from '../client/durations.js';
import type { ACL } from '../client/index.js';
import { CREATOR_ALL_ACL, OPEN_ACL_UNSAFE, READ_ACL_UNSAFE, Perms } from '../client/index.js';

const UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * A duration as ms: `500ms`, `1.5s`, `2m`, `1h`; a bare number is seconds, as for coreutils'
 * `timeout` and `sleep`, so `--timeout 10` means what a shell user expects. At most what a timer
 * can hold (596h, about 24.8 days): a longer one would fire at once.
 */
export function parseDuration(text: string): number {
  return atMost(parseAnyDuration(text), MAX_TIMER_MS, text);
}

/** A duration that must be more than 0 (a session or connect timeout). */
export function parsePositiveDuration(text: string): number {
  return positive(parseDuration(text), text);
}

/** A duration for a wait the lock recipes bound themselves (they chain timers): any length, e.g. 720h. */
export function parseLongDuration(text: string): number {
  return atMost(parseAnyDuration(text), Number.MAX_SAFE_INTEGER, text);
}

/** A long duration (see parseLongDuration) that must be more than 0: a bound on a hold. */
export function parsePositiveLongDuration(text: string): number {
  return positive(parseLongDuration(text), text);
}

function positive(ms: number, text: string): number {
  if (ms <= 0) throw new InvalidArgumentError(`expected a duration of more than 0, got "${text}"`);
  return ms;
}

function parseAnyDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!match) throw new InvalidArgumentError(`expected a duration such as 500ms, 10s, 2m or 1h (a bare number is seconds), got "${text}"`);
  return Math.round(Number(match[1]) * (UNITS[match[2] ?? 's'] ?? 1000));
}

function atMost(ms: number, max: number, text: string): number {
  if (!(ms <= max)) throw new InvalidArgumentError(`expected a duration of at most ${Math.floor(max / UNITS.h!)}h, got "${text}"`);
  return ms;
}

export function parsePositiveInteger(text: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(value) || value < 1) {
    throw new InvalidArgumentError(`expected a whole number >= 1, got "${text}"`);
  }
  return value;
}

/** A TCP port to listen on; 0 lets the system choose a free one. */
export function parsePort(text: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || value > 65535) throw new InvalidArgumentError(`expected a port from 0 to 65535, got "${text}"`);
  return value;
}

export interface AuthEntry {
  scheme: string;
  auth: string;
}

/** `scheme:credentials`, e.g. `digest:user:pass`; repeatable, so the values accumulate. */
export function parseAuth(text: string, previous: AuthEntry[] = []): AuthEntry[] {
  const colon = text.indexOf(':');
  if (colon <= 0 || colon === text.length - 1) throw new InvalidArgumentError(`expected scheme:credentials such as digest:user:pass, got "${text}"`);
  return [...previous, { scheme: text.slice(0, colon), auth: text.slice(colon + 1) }];
}

/** A znode path as the client requires: absolute, no trailing slash. Checked here so the error names the argument. */
export function parseZnodePath(text: string): string {
  if (!text.startsWith('/')) throw new InvalidArgumentError(`expected an absolute znode path such as /locks/db, got "${text}"`);
  if (text.length > 1 && text.endsWith('/')) throw new InvalidArgumentError(`a znode path must not end with "/": "${text}"`);
  return text;
}

/** A signal name, `SIGUSR1` or `usr1`, as kill(1) takes it. */
export function parseSignal(text: string): NodeJS.Signals {
  const name = (text.toUpperCase().startsWith('SIG') ? text.toUpperCase() : `SIG${text.toUpperCase()}`) as NodeJS.Signals;
  if (!(name in constants.signals)) throw new InvalidArgumentError(`expected a signal name such as SIGTERM or USR1, got "${text}"`);
  return name;
}

/** `--acl` presets, usable as entries among the others (see parseAcl). */
export const ACL_PRESETS: Readonly<Record<string, readonly ACL[]>> = {
  open: OPEN_ACL_UNSAFE,
  'creator-all': CREATOR_ALL_ACL,
  'creator-all-read': [...CREATOR_ALL_ACL, ...READ_ACL_UNSAFE],
};

const PERM_LETTERS: Readonly<Record<string, number>> = { c: Perms.CREATE, d: Perms.DELETE, r: Perms.READ, w: Perms.WRITE, a: Perms.ADMIN };

/**
 * An ACL as zkCli writes one: comma-separated `scheme:id:perms` entries, perms from `cdrwa`
 * (`digest:ops:HASH:cdrwa,world:anyone:r`; the id is everything between the first and the last
 * colon, so a digest's `user:hash` fits), or preset names (`creator-all-read`, `creator-all`,
 * `open`), mixed as wanted. `auth::cdrwa` (or a creator preset) names the identities given with `--auth`.
 */
export function parseAcl(text: string): ACL[] {
  const acl: ACL[] = [];
  for (const entry of text.split(',').map((e) => e.trim())) {
    const preset = ACL_PRESETS[entry];
    if (preset) {
      acl.push(...preset);
      continue;
    }
    const first = entry.indexOf(':');
    const last = entry.lastIndexOf(':');
    const letters = entry.slice(last + 1);
    if (first <= 0 || last === first || letters === '' || [...letters].some((l) => PERM_LETTERS[l] === undefined)) {
      throw new InvalidArgumentError(`expected scheme:id:perms entries (perms from cdrwa) or a preset (${Object.keys(ACL_PRESETS).join(', ')}), comma-separated, got "${entry}"`);
    }
    acl.push({ perms: [...letters].reduce((perms, l) => perms | PERM_LETTERS[l]!, 0), id: { scheme: entry.slice(0, first), id: entry.slice(first + 1, last) } });
  }
  return acl;
}
