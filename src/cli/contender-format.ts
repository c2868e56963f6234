import type { ContenderInfo } from '../index.js';
import { formatAge } from './timing.js';
import { hexId } from '../client/diagnostics.js';

/** A contender as JSON: bigints become decimal strings (JSON has no 64-bit integers). */
export function contenderJson(c: ContenderInfo, now = Date.now()): Record<string, unknown> {
  return {
    node: c.path,
    kind: c.kind,
    owner: c.owner,
    ...(c.revocationRequested ? { revocationRequested: true } : {}),
    ...(c.unreadable ? { unreadable: true } : {}),
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

export function contenderRow(role: string, c: ContenderInfo, now = Date.now()): string[] {
  return [role, c.owner.id, formatAge(now - c.createdAt.getTime()), c.fencingToken.toString(), c.kind, c.name];
}
