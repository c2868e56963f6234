import type { Contender } from '../contender-name.js';
import type { QueueWait } from '../queue-watch.js';
import { presentBlockers } from '../queue-watch.js';
import { waitUntilGone } from '../blocker-watch.js';
import { anySignal } from '../../support/any-signal.js';

/**
 * The handoff without a request. A waiter watches only its nearest blocker B; when B goes it must
 * learn whether the others of its first listing (`rest`, all ahead of B) are gone too, and that
 * check is a round trip on the handoff's critical path: the release's commit, the event, then a
 * read before the waiter may hold. The lookahead learns the same thing earlier, while B still
 * holds or waits: it follows `rest` as the waiter follows its whole queue (watch the nearest,
 * when it goes read which of the others are left, repeat). When B goes and the lookahead already
 * knows `rest` is gone, the waiter holds with no request at all.
 *
 * Why it is safe: the waiter holds when every contender of its first listing is gone (for a
 * reader: gone or downgraded), which is the plain rule of the queue. The listing came after our
 * create, so it holds every node with a smaller sequence, and no node with a smaller sequence can
 * be created later (the server numbers children in creation order): once gone, such a node is
 * gone for good. The lookahead's knowledge is made only of such facts (a deletion event, a NONODE
 * or downgraded read), so it is never stale in the unsafe direction, whenever it was learned. It
 * follows only for exclusive waiters, for whom nothing but a deletion counts: it trusts no data
 * written by anyone, no release record, no marker, so a Curator Revoker, a guard() or a tool
 * writing into a node changes nothing (that is what sank the release-marker design). Curator
 * and kazoo contenders need do nothing: only deletions are read.
 *
 * What it costs: the release of a node notifies two waiters, the one behind it and the one behind
 * that (still no herd: the count does not grow with the queue); and the second one reads which of
 * its blockers are left, off the critical path. (Readers do not follow: all the readers behind a
 * writer wait for it, and following the writer ahead of it too would double every release's
 * wake-ups.) If the lookahead has not caught up when B goes
 * (B was quicker than its check, or a waiter left out of order) the waiter waits for a check
 * already on its way, else does the plain check: never worse than without it by more than that.
 */
export class Lookahead {
  private known = false;
  /** The read of who is left, while one is on its way. */
  private checking: Promise<unknown> | undefined;
  private readonly stopper = new AbortController();

  constructor(o: QueueWait, rest: readonly Contender[], owner: bigint) {
    void this.follow(o, rest, owner, anySignal([o.deadline.signal, this.stopper.signal]));
  }

  /** Whether every contender it follows is known gone; waits for a check already on its way rather than sending another. */
  async clear(): Promise<boolean> {
    await this.checking;
    return this.known;
  }

  /** Stops following (removing its watch, if one is set). */
  stop(): void {
    this.stopper.abort();
  }

  private async follow(o: QueueWait, rest: readonly Contender[], owner: bigint, stop: AbortSignal): Promise<void> {
    try {
      let left = rest;
      while (left.length > 0 && !stop.aborted) {
        await waitUntilGone(o, left[0]!, owner, stop);
        const checking = presentBlockers(o, { near: left.slice(1) });
        this.checking = checking.catch(() => undefined);
        left = (await checking).near;
        this.checking = undefined;
      }
      this.known = left.length === 0;
    } catch {
      // Stopped, or the session or connection failed: the waiter's own check decides, as without a lookahead.
      this.checking = undefined;
    }
  }
}
