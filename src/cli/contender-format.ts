import type { ContenderInfo } from '../index.js';
import { REVOKED_OWNER } from '../index.js';
import { formatAge } from './timing.js';
import { hexId } from '../client/diagnostics.js';

/** A contender as JSON: bigints become decimal strings (JSON has no 64-bit integers). */
export function contenderJson(c: ContenderInfo, now = Date.now()): Record<string, unknown> {
  return {
    node: c.path,
    kind: c.kind,
    owner: c.owner,
    ...(c.revocationRequested ? { revocationRequested: true } : {}),
    sessionId: hexId(c.sessionId),
    createdAt: c.createdAt.toISOString(),
    ageMs: now - c.createdAt.getTime(),
    fencingToken: c.fencingToken.toString(),
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

export function contenderRow(role: string, c: ContenderInfo, now = Date.now()): string[] {
  return [role, ownerLabel(c.owner.id, c.revocationRequested), formatAge(now - c.createdAt.getTime()), c.fencingToken.toString(), c.kind, c.name];
}
