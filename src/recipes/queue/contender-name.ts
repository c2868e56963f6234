import { randomUUID } from 'node:crypto';

/** Shared contenders (readers) exclude only exclusive ones; exclusive contenders exclude everyone. */
export type ContenderKind = 'exclusive' | 'shared';

/** Node naming scheme: Curator's (the default) or kazoo's, for interoperating with services on the same path. */
export type Layout = 'curator' | 'kazoo';

export interface Contender {
  /** The child name, e.g. `_c_<uuid>-lock-0000000003`. */
  name: string;
  /** The sequence suffix as a signed 32-bit number. */
  seq: number;
  kind: ContenderKind;
}

const SEQ = '(\\d{10}|-\\d{9,10})';
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const HEX32 = '[0-9a-f]{32}';

/** Exactly the names Curator and kazoo create (the server formats the sequence with %010d: 10 digits, or a minus and 9-10 digits past the 2^31 wrap); any other child is ignored (a stray child must not block a lock). */
const PATTERNS: readonly { re: RegExp; kind: ContenderKind }[] = [
  { re: new RegExp(`^(?:_c_(${UUID})-)?lock-${SEQ}$`), kind: 'exclusive' },
  { re: new RegExp(`^(?:_c_(${UUID})-)?__WRIT__${SEQ}$`), kind: 'exclusive' },
  { re: new RegExp(`^(?:_c_(${UUID})-)?__READ__${SEQ}$`), kind: 'shared' },
  { re: new RegExp(`^(${HEX32})?__lock__${SEQ}$`), kind: 'exclusive' },
  { re: new RegExp(`^(${HEX32})?__rlock__${SEQ}$`), kind: 'shared' },
];

export function parseContender(name: string): Contender | undefined {
  for (const { re, kind } of PATTERNS) {
    const match = re.exec(name);
    if (match) return { name, seq: Number(match[2]), kind };
  }
  return undefined;
}

/** Serial-number order: a before b when (b - a) wraps to a positive int32, so the 2^31 wrap keeps the order. */
export function compareSeq(a: number, b: number): number {
  return (a - b) | 0;
}

/** The recognised contenders among `children`, in queue order. */
export function sortContenders(children: readonly string[]): Contender[] {
  const contenders: Contender[] = [];
  for (const child of children) {
    const parsed = parseContender(child);
    if (parsed) contenders.push(parsed);
  }
  return contenders.sort((a, b) => compareSeq(a.seq, b.seq));
}

/** A fresh name prefix for one acquisition attempt; the server appends the sequence. */
export function contenderPrefix(layout: Layout, kind: ContenderKind, role: 'lock' | 'rw'): { prefix: string; protectionId: string } {
  const uuid = randomUUID();
  if (layout === 'kazoo') {
    const hex = uuid.replaceAll('-', '');
    return { prefix: `${hex}${kind === 'shared' ? '__rlock__' : '__lock__'}`, protectionId: hex };
  }
  const marker = role === 'lock' ? '-lock-' : kind === 'shared' ? '-__READ__' : '-__WRIT__';
  return { prefix: `_c_${uuid}${marker}`, protectionId: uuid };
}

/**
 * The contenders `self` must wait for, nearest first: every contender ahead for an exclusive one,
 * only exclusive ones ahead for a shared one. Empty means `self` holds the lock. Nodes ahead can
 * only disappear (new ones sort after us), so this list, taken once, bounds all future waiting.
 */
export function blockers(queue: readonly Contender[], self: Contender, ignore: ReadonlySet<string> = new Set()): Contender[] {
  const ahead: Contender[] = [];
  for (const c of queue) {
    if (c.name === self.name) break;
    if (ignore.has(c.name)) continue;
    if (blocks(c, self)) ahead.push(c);
  }
  return ahead.reverse();
}

/** Whether `ahead`, queued before `self`, keeps it waiting: the rule of blockers() for one pair. */
export function blocks(ahead: Contender, self: Contender): boolean {
  return self.kind === 'exclusive' || ahead.kind === 'exclusive';
}

/**
 * The index of the contender with sequence `seq` in `queue` (in queue order, as sortContenders
 * gives it), or -1: a binary search, so that a listing shared by many waiters (see
 * fast/shared-listing.ts) costs each of them O(log n), not a walk to its place.
 */
export function indexOfSeq(queue: readonly Contender[], seq: number): number {
  let low = 0;
  let high = queue.length - 1;
  while (low <= high) {
    const mid = (low + high) >>> 1;
    const order = compareSeq(queue[mid]!.seq, seq);
    if (order === 0) return mid;
    if (order < 0) low = mid + 1;
    else high = mid - 1;
  }
  return -1;
}
