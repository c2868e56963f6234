import { AsyncLocalStorage } from 'node:async_hooks';
import type { Lease } from './lease.js';
import { LockError, LockLostError } from '../support/lock-error.js';

/**
 * One lock's critical section (a `runExclusive` call), as the async call chain inside it sees it.
 *
 * Re-entry is by async call chain, as Java's is by thread: everything the section starts, awaited
 * or not (a timer, an un-awaited call, each sibling of a `Promise.all`), runs inside it. A
 * re-entered section runs at once, concurrently with whatever else the chain runs: excluding
 * those from each other is the caller's business. The section's node stays until the outermost
 * call and every section re-entered from it have ended.
 */
export class Section {
  /** Re-entered sections still running. */
  private nested = 0;
  private drained: (() => void) | undefined;
  /** Set once the outermost call and its re-entered sections have ended: what starts later is outside. */
  private ended = false;

  constructor(readonly lease: Lease) {}

  get open(): boolean {
    return !this.ended;
  }

  /**
   * Why the lease was lost while the section is still open, its node perhaps still there on our
   * session (so a new node of ours would wait behind it); undefined while held, or once its
   * holder released it (by hand, or handed it over in a downgrade).
   */
  get loss(): LockLostError | undefined {
    if (this.lease.held) return undefined;
    const reason: unknown = this.lease.signal.reason;
    return reason instanceof LockLostError && reason.reason !== 'RELEASED' ? reason : undefined;
  }

  async reenter<T>(fn: () => Promise<T> | T): Promise<T> {
    this.nested++;
    try {
      return await fn();
    } finally {
      if (--this.nested === 0) this.drained?.();
    }
  }

  /** Resolves once no re-entered section runs, and closes the section in the same step (a re-entry cannot slip in between). */
  async end(): Promise<void> {
    while (this.nested > 0) await new Promise<void>((resolve) => (this.drained = resolve));
    this.ended = true;
  }
}

const sections = new AsyncLocalStorage<ReadonlyMap<object, Section>>();

/** The open section of `lock` that the current call chain is inside, if any. */
export function sectionOf(lock: object): Section | undefined {
  const section = sections.getStore()?.get(lock);
  return section?.open ? section : undefined;
}

/**
 * Runs `fn` as the outermost section of `lock` held through `lease` (for it and every chain it
 * starts), and resolves once it and every section re-entered from it have ended.
 */
export async function runSection<T>(lock: object, lease: Lease, fn: () => Promise<T>): Promise<T> {
  const section = new Section(lease);
  const next = new Map(sections.getStore());
  next.set(lock, section);
  try {
    return await sections.run(next, fn);
  } finally {
    await section.end();
  }
}

/**
 * Fails where acquiring from inside `section` (of this lock, or of its other side) would queue a
 * node behind our own: with `code` while its lease is held, with LOCK_LOST (the loss as cause)
 * once the lease was lost, as its node may still be there on our session.
 */
export function refuseInside(section: Section | undefined, lockPath: string, code: 'WOULD_DEADLOCK' | 'UPGRADE_NOT_SUPPORTED', message: string): void {
  if (!section) return;
  const where = { path: lockPath, op: 'acquire' };
  if (section.lease.held) throw new LockError(code, message, where);
  const loss = section.loss;
  if (loss) throw new LockError('LOCK_LOST', `this call chain's lease on ${section.lease.lockPath} was lost (${loss.reason}): its node may still block ours`, { ...where, cause: loss });
}
