import { EventEmitter } from 'node:events';
import type { PersistentWatch, WatchEvent, ZooKeeperClient } from '../../index.js';
import { isZooKeeperError } from '../../index.js';
import { messageOf } from '../cli-error.js';
import { LockModel } from './lock-model.js';
import type { ModelChange } from './lock-model.js';
import { affectedPaths, classify, scanTree } from './lock-scan.js';

/** What the page shows about the connection: the banner, and how changes reach us. */
export interface TreeStatus {
  state: 'connected' | 'disconnected' | 'expired' | 'closed';
  /** `watch`: one persistent recursive watch on the root; `poll`: the server knows no persistent watches (before 3.6), so the tree is read again every POLL_MS. */
  mode: 'watch' | 'poll' | 'starting';
  /** When `state` last changed (ms since the epoch). */
  since: number;
  /** The last scan stopped at --max-nodes. */
  truncated: boolean;
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

/**
 * The locks under `root`, kept current: one persistent recursive watch on the root marks the
 * paths whose locks may have changed, which are read again in batches. After a reconnect the
 * whole tree is read again (a persistent watch reports nothing that happened while we were
 * away), and after a session expiry the watch is set again on the new session.
 */
export class LiveTree extends EventEmitter<LiveTreeEvents> {
  readonly model = new LockModel();
  private statusNow: TreeStatus = { state: 'connected', mode: 'starting', since: Date.now(), truncated: false };
  private watch: PersistentWatch | undefined;
  private readonly dirty = new Set<string>();
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
      else if (event === 'expired') this.setStatus({ state: 'expired' });
      else if (event === 'closed') this.setStatus({ state: 'closed' });
      else if (event === 'reconnected') {
        this.setStatus({ state: 'connected' });
        this.rescan();
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
    this.running = this.running.then(async () => {
      if (this.stopped) return;
      try {
        await pass();
      } catch (error) {
        // Unreachable or expired: the state listener starts over when the server is back.
        this.setStatus({ error: messageOf(error) });
      }
    });
  }

  private async startWatching(): Promise<void> {
    await this.watch?.remove().catch(() => undefined);
    this.watch = undefined;
    clearInterval(this.pollTimer);
    try {
      // Set before the tree is read: a change during the read is then seen too, never lost between the two.
      const watch = await this.client.addWatch(this.root, { recursive: true, maxBuffered: Number.MAX_SAFE_INTEGER });
      watch.on((event) => this.onEvent(event));
      this.watch = watch;
      this.setStatus({ mode: 'watch' });
    } catch (error) {
      // A 3.5 server answers UNIMPLEMENTED; older ones drop the connection on an op they do not know.
      if (!isZooKeeperError(error, 'UNIMPLEMENTED') && !isZooKeeperError(error, 'MARSHALLINGERROR')) throw error;
      this.setStatus({ mode: 'poll' });
      this.pollTimer = setInterval(() => this.rescan(), POLL_MS);
    }
    await this.scanAll();
  }

  private onEvent(event: WatchEvent): void {
    if (event.type === 'expired' || event.type === 'closed') return;
    for (const path of affectedPaths(event.path, this.root)) this.dirty.add(path);
    this.flushTimer ??= setTimeout(() => {
      this.flushTimer = undefined;
      this.schedule(() => this.readDirty());
    }, BATCH_MS);
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
    const { locks, truncated } = await scanTree(this.client, this.root, this.maxNodes);
    const change: ModelChange = { upserts: [], removed: [] };
    const paths = new Set([...this.model.all().map((l) => l.path), ...locks.keys()]);
    for (const path of paths) {
      const found = locks.get(path);
      // A known lock that is empty now was not kept by the walk (no contender children): read it as the lock it was.
      const scanned = found ?? (this.model.has(path) ? await classify(this.client, path, this.model.kindOf(path)) : undefined);
      merge(change, this.model.update(path, scanned));
    }
    this.setStatus({ truncated, error: undefined });
    this.publish(change);
  }

  private async readDirty(): Promise<void> {
    const paths = [...this.dirty];
    this.dirty.clear();
    const change: ModelChange = { upserts: [], removed: [] };
    const read = await Promise.all(paths.map(async (path) => [path, await classify(this.client, path, this.model.kindOf(path))] as const));
    for (const [path, scanned] of read) merge(change, this.model.update(path, scanned));
    this.publish(change);
  }

  private publish(change: ModelChange): void {
    if (change.upserts.length + change.removed.length > 0) this.emit('change', change);
  }
}

function merge(into: ModelChange, change: ModelChange): void {
  into.upserts.push(...change.upserts);
  into.removed.push(...change.removed);
}
