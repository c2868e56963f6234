import type { ContenderInfo } from '../../index.js';
import type { ShownKind, ScannedLock } from './lock-scan.js';
import { hexId } from '../../client/diagnostics.js';

/** Owner data is anyone's bytes: the page gets at most this much of each text field. */
const MAX_TEXT = 200;
/** Waiters sent per lock; the rest are counted (a queue of thousands is one fact, not a page). */
const MAX_WAITERS_SENT = 100;
/** Timeline events and acquisition waits kept per lock. */
const HISTORY = 40;

/** A contender as the page sees it: plain JSON, texts cut to size. */
export interface ContenderView {
  name: string;
  path: string;
  kind: ContenderInfo['kind'];
  owner: string;
  host?: string;
  pid?: number;
  session: string;
  /** The node's ctime (ms since the epoch, the server's clock): when it joined the queue. */
  since: number;
  /** Holders: a time by which the hold had begun (ContenderInfo.heldSince); `heldExact` when it began then. */
  heldSince?: number;
  heldExact?: true;
  revoking?: true;
  downgraded?: true;
}

/** Only a holder has a fencing token: a waiter's czxid becomes one only if it gets the lock. */
export interface HolderView extends ContenderView {
  token: string;
}

export type HistoryType = 'acquired' | 'released' | 'forced' | 'revoke';

export interface HistoryEvent {
  t: number;
  type: HistoryType;
  owner: string;
  token: string;
}

export interface LockView {
  path: string;
  kind: ShownKind;
  holders: HolderView[];
  waiters: ContenderView[];
  /** Waiters beyond those sent. */
  moreWaiters: number;
  history: HistoryEvent[];
  /** How long recent holders waited before they got the lock, in ms, oldest first. */
  waits: number[];
}

export interface ModelChange {
  upserts: LockView[];
  removed: string[];
}

function cut(text: string): string {
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text;
}

function view(c: ContenderInfo): ContenderView {
  const owner = c.owner;
  return {
    name: cut(c.name),
    path: c.path,
    kind: c.kind,
    owner: cut(owner.id),
    ...('host' in owner && typeof owner.host === 'string' ? { host: cut(owner.host) } : {}),
    ...('pid' in owner && Number.isSafeInteger(owner.pid) ? { pid: owner.pid } : {}),
    session: hexId(c.sessionId),
    since: c.createdAt.getTime(),
    ...(c.heldSince ? { heldSince: c.heldSince.getTime() } : {}),
    ...(c.heldSinceExact ? { heldExact: true as const } : {}),
    ...(c.revocationRequested ? { revoking: true as const } : {}),
    ...(c.downgraded ? { downgraded: true as const } : {}),
  };
}

function holderView(c: ContenderInfo): HolderView {
  return { ...view(c), token: c.fencingToken.toString() };
}

function keep<T>(list: T[], item: T): void {
  list.push(item);
  if (list.length > HISTORY) list.splice(0, list.length - HISTORY);
}

/**
 * Every lock under the root as last read, and what happened to each since this process started
 * watching: handoffs (a holder's node gone, the next one holding), force releases made here,
 * revocation requests. Seen from outside, a release and a lock lost to an expired session look
 * the same (the node goes); a node this UI deleted is marked `forced`.
 */
export class LockModel {
  private readonly locks = new Map<string, LockView>();
  /** Nodes this process force-released, so their end shows as `forced`, not `released`. */
  private readonly forced = new Set<string>();

  all(): LockView[] {
    return [...this.locks.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  kindOf(path: string): ShownKind | undefined {
    return this.locks.get(path)?.kind;
  }

  /** The contender `nodePath` of a lock shown, and its lock's kind, if any. */
  contender(nodePath: string): { contender: ContenderView; kind: ShownKind } | undefined {
    for (const lock of this.locks.values()) {
      const found = [...lock.holders, ...lock.waiters].find((c) => c.path === nodePath);
      if (found) return { contender: found, kind: lock.kind };
    }
    return undefined;
  }

  /** `forced`: the node is being deleted by a force release (its hold ends in red); false again if the delete failed. */
  markForced(nodePath: string, forced = true): void {
    if (forced) this.forced.add(nodePath);
    else this.forced.delete(nodePath);
  }

  /** Records what was read at `path` (undefined: no lock there now); the view to send, if anything changed. */
  update(path: string, scanned: ScannedLock | undefined, now = Date.now()): ModelChange {
    const before = this.locks.get(path);
    if (!scanned) {
      if (!before) return { upserts: [], removed: [] };
      this.locks.delete(path);
      return { upserts: [], removed: [path] };
    }
    const holders = scanned.state.holders.map(holderView);
    const waiters = scanned.state.waiters.map(view);
    const next: LockView = {
      path,
      kind: scanned.kind,
      holders,
      waiters: waiters.slice(0, MAX_WAITERS_SENT),
      moreWaiters: Math.max(0, waiters.length - MAX_WAITERS_SENT),
      history: before ? [...before.history] : [],
      waits: before ? [...before.waits] : [],
    };
    this.record(before, next, now);
    if (before && JSON.stringify(before) === JSON.stringify(next)) return { upserts: [], removed: [] };
    this.locks.set(path, next);
    return { upserts: [next], removed: [] };
  }

  private record(before: LockView | undefined, next: LockView, now: number): void {
    const was = new Map((before?.holders ?? []).map((h) => [h.path, h]));
    const is = new Set(next.holders.map((h) => h.path));
    const present = new Set([...is, ...next.waiters.map((w) => w.path)]);
    for (const [path, holder] of was) {
      if (is.has(path)) continue;
      const type = this.forced.delete(path) ? 'forced' : 'released';
      if (!present.has(path)) keep(next.history, { t: now, type, owner: holder.owner, token: holder.token });
    }
    for (const holder of next.holders) {
      const old = was.get(holder.path);
      if (!old) {
        // A holder already there when we started watching did not acquire in our sight: its wait is unknown.
        if (before) keep(next.waits, Math.max(0, now - holder.since));
        // One there before we looked held since its heldSince at the latest; its ctime is when it queued, which would draw its wait as a hold.
        keep(next.history, { t: before ? now : (holder.heldSince ?? now), type: 'acquired', owner: holder.owner, token: holder.token });
      }
      if (holder.revoking && !old?.revoking) keep(next.history, { t: now, type: 'revoke', owner: holder.owner, token: holder.token });
    }
  }
}
