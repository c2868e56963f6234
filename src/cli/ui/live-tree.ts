import { EventEmitter } from 'node:events';
import type { PersistentWatch, WatchEvent, ZooKeeperClient } from '../../index.js';
import { isZooKeeperError } from '../../index.js';
import { messageOf } from '../cli-error.js';
import { LockModel } from './lock-model.js';
import type { ModelChange } from './lock-model.js';
import { SCAN_PARALLELISM, SemaphoreCheck, affectedPaths, classify, scanTree, settleBounded, unreadableHere } from './lock-scan.js';

/** What the page shows about the connection: the banner, and how changes reach us. */
export interface TreeStatus {
  state: 'connected' | 'disconnected' | 'expired' | 'closed';
  /**
   * `watch`: one persistent recursive watch on the root; `poll`: the server knows no persistent
   * watches (before 3.6), so the tree is read again every POLL_MS; `starting`: the tree is being
   * read on a new session (at start, after an expiry), so what the page shows may be old.
   */
  mode: 'watch' | 'poll' | 'starting';
  /** When `state` last changed (ms since the epoch). */
  since: number;
  /** The last scan stopped at --max-nodes. */
  truncated: boolean;
  /** Znodes under the root our credentials may not read (their ACL): left out of the page. */
  unreadable: number;
  /** Why the last read failed, while it does. */
  error?: string;
}

export interface LiveTreeEvents {
  change: [change: ModelChange];
  status: [status: TreeStatus];
}

const POLL_MS = 1000;
/** Changes are read in batches: a burst (a lock handed on, a thousand waiters arriving) is one round of reads, not one per event. */
const BATCH_MS = 25;
/** A path whose read failed (not for its ACL) is tried again this many times, RETRY_MS apart; then it waits for the next rescan. */
const MAX_RETRIES = 5;
const RETRY_MS = 500;

/**
 * The locks under `root`, kept current: one persistent recursive watch on the root marks the
 * paths whose locks may have changed, which are read again in batches. After a reconnect the
 * whole tree is read again (a persistent watch reports nothing that happened while we were
 * away), and after a session expiry the watch is set again on the new session.
 */
export class LiveTree extends EventEmitter<LiveTreeEvents> {
  readonly model = new LockModel();
  private statusNow: TreeStatus = { state: 'connected', mode: 'starting', since: Date.now(), truncated: false, unreadable: 0 };
  private watch: PersistentWatch | undefined;
  private readonly dirty = new Set<string>();
  /** Paths whose last read failed, and how often in a row. */
  private readonly retries = new Map<string, number>();
  private readonly unreadable = new Set<string>();
  private flushTimer: NodeJS.Timeout | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  /** One read pass at a time; another one asked for meanwhile runs after it. */
  private running: Promise<void> = Promise.resolve();
  private rescanWanted = false;
  private stopped = false;
  private readonly offState: () => void;

  constructor(
    private readonly client: ZooKeeperClient,
    readonly root: string,
    private readonly maxNodes: number,
  ) {
    super();
    this.offState = client.onState((event) => {
      if (event === 'suspended') this.setStatus({ state: 'disconnected' });
      // The watch died with the session: not live again until the next one has its own and the tree is read again.
      else if (event === 'expired') this.setStatus({ state: 'expired', mode: 'starting' });
      else if (event === 'closed') this.setStatus({ state: 'closed' });
      else if (event === 'reconnected') {
        this.setStatus({ state: 'connected' });
        // No watch yet (the connection dropped before the first addWatch answered, or it failed): set it now, which reads the tree too.
        if (!this.watch && !this.pollTimer) this.schedule(() => this.startWatching());
        else this.rescan();
      } else if (event === 'connected' && this.statusNow.state !== 'connected') {
        // A new session: the old one's watch died with it.
        this.setStatus({ state: 'connected' });
        this.schedule(() => this.startWatching());
      }
    });
  }

  get status(): TreeStatus {
    return this.statusNow;
  }

  async start(): Promise<void> {
    this.schedule(() => this.startWatching());
    await this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.offState();
    // A pass under way may still set a timer (a poll interval, a flush): cleared once it is over.
    await this.running;
    clearTimeout(this.flushTimer);
    clearInterval(this.pollTimer);
    await this.watch?.remove().catch(() => undefined);
  }

  private setStatus(patch: Partial<TreeStatus>): void {
    const state = patch.state ?? this.statusNow.state;
    const since = state === this.statusNow.state ? this.statusNow.since : Date.now();
    const next: TreeStatus = { ...this.statusNow, ...patch, since };
    if (next.error === undefined) delete next.error;
    if (JSON.stringify(next) === JSON.stringify(this.statusNow)) return;
    this.statusNow = next;
    this.emit('status', next);
  }

  private schedule(pass: () => Promise<void>): void {
    this.running = this.running
      .then(async () => {
        if (this.stopped) return;
        try {
          await pass();
        } catch (error) {
          // Unreachable or expired: the state listener starts over when the server is back.
          this.setStatus({ error: messageOf(error) });
        }
      })
      // A listener that throws on the status must not leave the chain rejected: every later pass would be skipped.
      .catch(() => undefined);
  }

  private async startWatching(): Promise<void> {
    await this.watch?.remove().catch(() => undefined);
    this.watch = undefined;
    clearInterval(this.pollTimer);
    this.pollTimer = undefined;
    try {
      // Set before the tree is read: a change during the read is then seen too, never lost between the two.
      const watch = await this.client.addWatch(this.root, { recursive: true });
      watch.on((event) => this.onEvent(event));
      this.watch = watch;
    } catch (error) {
      // A 3.5 server answers UNIMPLEMENTED and closes the connection (the read below then fails: the poll reads after
      // the reconnect); older ones drop the connection on an op they do not know.
      if (!isZooKeeperError(error, 'UNIMPLEMENTED') && !isZooKeeperError(error, 'MARSHALLINGERROR')) throw error;
      this.pollTimer = setInterval(() => this.rescan(), POLL_MS);
    }
    await this.scanAll();
  }

  private onEvent(event: WatchEvent): void {
    // The session's states are handled by the state listener (it reads the tree again after a reconnect, watch or poll).
    if (event.type === 'expired' || event.type === 'closed' || event.type === 'disconnected' || event.type === 'reconnected') return;
    for (const path of affectedPaths(event.path, this.root)) this.dirty.add(path);
    this.flushSoon(BATCH_MS);
  }

  private flushSoon(ms: number): void {
    if (this.stopped) return;
    this.flushTimer ??= setTimeout(() => {
      this.flushTimer = undefined;
      this.schedule(() => this.readDirty());
    }, ms);
  }

  /** Reads the whole tree again, once, after whatever pass is running. */
  private rescan(): void {
    if (this.rescanWanted) return;
    this.rescanWanted = true;
    this.schedule(async () => {
      this.rescanWanted = false;
      await this.scanAll();
    });
  }

  private async scanAll(): Promise<void> {
    const { locks, truncated, unreadable } = await scanTree(this.client, this.root, this.maxNodes);
    // A known lock that is empty now was not kept by the walk (no contender children): read it again as the lock it was.
    const gone = this.model.all().filter((l) => !locks.has(l.path) && !unreadable.has(l.path)).map((l) => l.path);
    const parts = new SemaphoreCheck(this.client, this.root);
    const reread = await settleBounded(gone, SCAN_PARALLELISM, (path) => classify(this.client, path, parts, this.model.kindOf(path)));
    const change: ModelChange = { upserts: [], removed: [] };
    for (const [path, scanned] of locks) merge(change, this.model.update(path, scanned));
    reread.forEach((result, i) => {
      if (result.status === 'rejected' && !unreadableHere(result.reason)) throw result.reason;
      if (result.status === 'rejected') unreadable.add(gone[i]!);
      else merge(change, this.model.update(gone[i]!, result.value));
    });
    this.unreadable.clear();
    for (const path of unreadable) this.unreadable.add(path);
    // The tree first, then the word that it is live: a page never says so over what it read before.
    this.publish(change);
    const mode = this.watch?.active ? 'watch' : this.pollTimer ? 'poll' : 'starting';
    this.setStatus({ mode, truncated, unreadable: this.unreadable.size, error: undefined });
  }

  /**
   * Reads the paths changes were seen at. Each path stands alone: one that fails leaves the
   * others' changes on show; it is tried again a few times (not for an ACL: that stays).
   */
  private async readDirty(): Promise<void> {
    const paths = [...this.dirty];
    this.dirty.clear();
    const change: ModelChange = { upserts: [], removed: [] };
    const parts = new SemaphoreCheck(this.client, this.root);
    const read = await settleBounded(paths, SCAN_PARALLELISM, (path) => classify(this.client, path, parts, this.model.kindOf(path)));
    let retry = false;
    read.forEach((result, i) => {
      const path = paths[i]!;
      if (result.status === 'fulfilled') {
        this.retries.delete(path);
        this.unreadable.delete(path);
        merge(change, this.model.update(path, result.value));
      } else if (unreadableHere(result.reason)) {
        this.unreadable.add(path);
      } else {
        const tries = (this.retries.get(path) ?? 0) + 1;
        this.setStatus({ error: messageOf(result.reason) });
        if (tries > MAX_RETRIES) return void this.retries.delete(path);
        this.retries.set(path, tries);
        this.dirty.add(path);
        retry = true;
      }
    });
    this.setStatus({ unreadable: this.unreadable.size, ...(retry ? {} : { error: undefined }) });
    this.publish(change);
    if (retry) this.flushSoon(RETRY_MS);
  }

  private publish(change: ModelChange): void {
    if (change.upserts.length + change.removed.length > 0) this.emit('change', change);
  }
}

function merge(into: ModelChange, change: ModelChange): void {
  into.upserts.push(...change.upserts);
  into.removed.push(...change.removed);
}
