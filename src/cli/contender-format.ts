import type { ContenderInfo } from '../index.js';
import { REVOKED_OWNER } from '../index.js';
import { formatAge } from './timing.js';
import { hexId } from '../client/diagnostics.js';

/**
 * A contender as JSON: bigints become decimal strings (JSON has no 64-bit integers). Only a
 * holder has a `fencingToken`: a waiter's czxid becomes one only if it gets the lock.
 */
export function contenderJson(c: ContenderInfo, holder: boolean, now = Date.now()): Record<string, unknown> {
  return {
    node: c.path,
    kind: c.kind,
    owner: c.owner,
    ...(c.revocationRequested ? { revocationRequested: true } : {}),
    ...(c.unreadable ? { unreadable: true } : {}),
    sessionId: hexId(c.sessionId),
    createdAt: c.createdAt.toISOString(),
    ageMs: now - c.createdAt.getTime(),
    ...(c.heldSince ? { heldSince: c.heldSince.toISOString(), heldForMs: now - c.heldSince.getTime(), heldExact: c.heldSinceExact === true } : {}),
    ...(holder ? { fencingToken: c.fencingToken.toString() } : {}),
  };
}

/** Rows of aligned text columns. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  return [header, ...rows].map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ')).join('\n');
}

/** The owner as an operator reads it: who, and whether someone asked it to let go (unless Curator's request bytes erased who). */
export function ownerLabel(id: string, revocationRequested: boolean | undefined): string {
  return revocationRequested && id !== REVOKED_OWNER ? `${id} (revocation requested)` : id;
}

/**
 * How long a holder has held, as far as the server tells (ContenderInfo.heldSince): `12s` when
 * known, `≥ 2s` when only a lower bound is, `≤ 1m46s` when only its time in the queue bounds it.
 * Never its wait counted as a hold.
 */
export function holdingText(c: ContenderInfo, now = Date.now()): string {
  if (!c.heldSince) return `≤ ${formatAge(now - c.createdAt.getTime())}`;
  return `${c.heldSinceExact ? '' : '≥ '}${formatAge(now - c.heldSince.getTime())}`;
}

/** A status row: a holder's HOLDING apart from its QUEUED (the time since it joined the queue); a waiter has neither a hold nor a fencing token. */
export function contenderRow(role: string, c: ContenderInfo, holder: boolean, now = Date.now()): string[] {
  return [role, ownerLabel(c.owner.id, c.revocationRequested), holder ? holdingText(c, now) : '-', formatAge(now - c.createdAt.getTime()), holder ? c.fencingToken.toString() : '-', c.kind, c.name];
}
