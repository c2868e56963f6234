import type { WatchEvent } from '../../client/index.js';
import { ZooKeeperError, joinPath } from '../../client/index.js';
import type { Contender } from './contender-name.js';
import { Deadline } from '../support/deadline.js';
import { isDowngraded, writtenByZklock } from '../support/owner-data.js';
import { awaitSession } from '../support/reconnect.js';
import { isTransient } from '../support/transient.js';
import type { QueueWait } from './queue-watch.js';
import { SessionLost } from './queue-watch.js';

/**
 * Waits until a blocker is gone, as plain fields of one object and no suspended async frame: a
 * waiter spends nearly all its life here, and each frame of an async chain kept while it waits
 * (its generator, registers, context, promise and reactions) costs about 500 bytes per waiter;
 * 10,000 waiters in one process must fit in 20 MB (see the memory bench). The client's watch
 * table holds the watcher, a function bound to this object: nothing else keeps a parked waiter
 * alive, as nothing else did when it was an async chain. A subclass hears how each wait ends,
 * exactly once: blockerGone or blockerFailed; it may then wait for another blocker.
 *
 * The watch is a data watch set by getData (not exists: a vanished node must not leave a
 * creation watch behind); what the read tells (writtenByZklock) is kept as one boolean, not the
 * data. A data change sets the watch again; a lost connection waits for the session (bounded by
 * the deadline) and sets it again; our session's end is SessionLost (our node went with it).
 * `stop` (see Stop; none when nothing can end the wait) ends the wait early with its reason, the
 * watch removed.
 */
export abstract class BlockerWait {
  private path = '';
  private byZklock: boolean | undefined;
  private settled = true;
  private owner = 0n;
  private stop: Stop | undefined;
  /**
   * The function in the client's watch table, the same for each blocker this object waits for.
   * A watch of an earlier blocker can still fire after its wait ended (a reader's wait ends on
   * the downgraded data, before the watch's removal is answered): events name their path, and
   * only the current blocker's count. `expired` and `closed` end every watch of the session,
   * whatever path they name (the client calls a watcher once for them, on any of its paths).
   */
  private readonly watcher: (event: WatchEvent) => void = this.onEvent.bind(this);

  constructor(protected readonly o: QueueWait) {}

  /** The blocker is gone (for a reader: or downgraded), with whether its data as last read was written by zklock (undefined: not read). */
  protected abstract blockerGone(byZklock: boolean | undefined): void;
  /** The wait failed: SessionLost, the stop signal's reason, CLOSED, or a request's error. */
  protected abstract blockerFailed(error: unknown): void;

  /** Starts waiting for the blocker at `path`, on behalf of our node of session `owner`; the previous wait must have ended. */
  protected waitFor(path: string, owner: bigint, stop: Stop | undefined): void {
    this.path = path;
    this.byZklock = undefined;
    this.settled = false;
    this.owner = owner;
    this.stop = stop;
    const stopped = reasonOf(stop);
    if (stopped !== undefined) return this.fail(stopped);
    // This object is the listener (handleEvent), not a closure: nothing more per bounded waiter.
    if (stop instanceof Deadline) stop.park(this);
    else stop?.addEventListener('abort', this, { once: true });
    this.round();
  }

  /** The stop ended the wait: the wait ends with its reason, and the watch goes. */
  handleEvent(): void {
    this.fail(reasonOf(this.stop), true);
  }

  /** One round: sets the watch and reads the data, after checking that our session is still the one our node belongs to. */
  private round(): void {
    const { client } = this.o;
    if (client.sessionId !== this.owner) return this.fail(new SessionLost());
    const path = this.path;
    client.getData(path, { watch: this.watcher }).then(
      ({ data }) => this.onData(path, data),
      (error: unknown) => this.onError(path, error),
    );
  }

  /** Whether a reply or event about `path` still concerns the current wait. */
  private current(path: string): boolean {
    return !this.settled && path === this.path;
  }

  private onData(path: string, data: Buffer): void {
    if (!this.current(path)) return;
    this.byZklock = writtenByZklock(data);
    // A downgraded writer holds a read lock: it no longer blocks readers.
    if (this.o.kind === 'shared' && isDowngraded(data)) this.gone(true);
  }

  private onError(path: string, error: unknown): void {
    if (!this.current(path)) return;
    if (!(error instanceof ZooKeeperError)) return this.fail(error);
    if (error.code === 'NONODE') return this.gone();
    if (error.code === 'SESSIONEXPIRED') return this.fail(new SessionLost());
    if (!isTransient(error)) return this.fail(error);
    // Again once reconnected; round() re-checks the session first: an expiry meanwhile means our node is gone.
    awaitSession(this.o.client, this.owner, this.o.deadline).then(
      () => {
        if (this.current(path)) this.round();
      },
      (waitError: unknown) => {
        if (this.current(path)) this.fail(waitError);
      },
    );
  }

  private onEvent(event: WatchEvent): void {
    if (event.type === 'expired') return this.fail(new SessionLost());
    if (event.type === 'closed') return this.fail(new ZooKeeperError('CLOSED', 'client closed while waiting for the lock', { path: this.o.lockPath, op: 'acquire' }));
    if (!this.current(event.path)) return;
    if (event.type === 'deleted') return this.gone();
    // Changed data: watch again.
    this.round();
  }

  /** Ends the wait: the blocker is gone; `unwatch`: its watch is still set, and goes. */
  private gone(unwatch = false): void {
    if (this.end(unwatch)) this.blockerGone(this.byZklock);
  }

  /** Ends the wait with `error`; `unwatch`: the watch is still set, and goes. */
  private fail(error: unknown, unwatch = false): void {
    if (this.end(unwatch)) this.blockerFailed(error);
  }

  /**
   * Whether the wait was still on, which it no longer is. Settled before the watch is removed
   * (removeWatcher tells the watcher so at once, and that must not start another round), and
   * before the subclass hears of it (it may wait for another blocker at once, with this watcher).
   */
  private end(unwatch: boolean): boolean {
    if (this.settled) return false;
    this.settled = true;
    if (unwatch) this.o.client.removeWatcher(this.path, this.watcher).catch(() => undefined);
    const { stop } = this;
    if (stop instanceof Deadline) stop.unpark(this);
    else stop?.removeEventListener('abort', this);
    return true;
  }
}

/**
 * What ends a wait early: the acquire's Deadline, which the wait parks on (Deadline.park: no
 * listener, and the deadline's signal may go meanwhile), or a signal (the lookahead's own).
 */
export type Stop = Deadline | AbortSignal;

/** Why `stop` ended, or undefined while it has not. */
function reasonOf(stop: Stop | undefined): unknown {
  if (stop instanceof Deadline) return stop.failure(undefined);
  return stop?.aborted ? (stop.reason as unknown) : undefined;
}

/** A BlockerWait as a promise, for a wait that is short-lived or rare (the lookahead's). */
class PromisedWait extends BlockerWait {
  constructor(
    o: QueueWait,
    private readonly resolve: (byZklock: boolean | undefined) => void,
    private readonly reject: (error: unknown) => void,
  ) {
    super(o);
  }

  start(blocker: Contender, owner: bigint, stop: Stop | undefined): void {
    this.waitFor(joinPath(this.o.lockPath, blocker.name), owner, stop);
  }

  protected blockerGone(byZklock: boolean | undefined): void {
    this.resolve(byZklock);
  }

  protected blockerFailed(error: unknown): void {
    this.reject(error);
  }
}

/** Resolves when `blocker` is gone (see BlockerWait), with whether its data as last read was written by zklock. */
export function waitUntilGone(o: QueueWait, blocker: Contender, owner: bigint, stop: Stop | undefined): Promise<boolean | undefined> {
  return new Promise((resolve, reject) => new PromisedWait(o, resolve, reject).start(blocker, owner, stop));
}
