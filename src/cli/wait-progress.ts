import type { ContenderInfo, LockState, SessionEvent, ZooKeeperClient } from '../index.js';
import { inspectLock } from '../index.js';
import { holdingText } from './contender-format.js';

const POLL_MS = 500;

export interface ProgressOptions {
  /** Redraw one live line (stderr is a terminal). */
  live: boolean;
  /** Log every change of position, holder or session state as its own line. */
  verbose: boolean;
  /**
   * Without the two above, say once that we wait when a look finds us queued behind another
   * (stderr is not a terminal: cron, CI, a log): a process never waits silently, and a lock free
   * at once leaves scripts' stderr clean. Off for a try, which does not wait for the lock.
   */
  announce: boolean;
  /** The kind of lock waited for: known from the flags, so a mutex beside a `locks` folder is not read as a semaphore. */
  kind: LockState['kind'];
}

/**
 * Where we are in the queue: `text` is what --verbose logs when it changes and the live line
 * shows when it fits; `short` says the same with the lock path last, for a narrow terminal,
 * where cutting the end loses only the path the user typed, never the holder or its age.
 */
export function describeWait(state: LockState, ownerId: string, now = Date.now()): { key: string; text: string; short: string; queued: boolean } {
  const position = state.waiters.findIndex((w) => w.owner.id === ownerId) + 1;
  const holder: ContenderInfo | undefined = state.holders[0];
  const where = position > 0 ? `position ${position} of ${state.waiters.length} in the queue` : 'joining the queue';
  const more = state.holders.length > 1 ? ` (+${state.holders.length - 1} more)` : '';
  const held = holder ? `held by ${holder.owner.id}${more} for ${holdingText(holder, now)}` : 'not held';
  const queued = position > 0 ? `${position}/${state.waiters.length} waiting` : 'joining';
  return {
    key: `${position}|${state.holders.map((h) => h.name).join(',')}`,
    text: `waiting for ${state.lockPath}: ${where}; ${held}`,
    short: `${queued}; ${held}; ${state.lockPath}`,
    queued: position > 0,
  };
}

/** The live line for a terminal `columns` wide: the full text if it fits, else the short form, cut to fit. */
function liveLine(wait: { text: string; short: string }, columns: number): string {
  // The last column is left empty: a line that fills it wraps on some terminals, and \r then redraws the wrong line.
  const width = Math.max(20, columns - 1);
  return wait.text.length <= width ? wait.text : wait.short.slice(0, width);
}

/**
 * Shows the wait on stderr until stopped, and with --verbose every session change until closed: a live line on a terminal, change logs with --verbose,
 * otherwise one line once we are found waiting (see ProgressOptions.announce). Inspection failures are not fatal: the
 * acquire itself decides success; the display only goes quiet until the next poll works.
 */
export class WaitProgress {
  private timer: NodeJS.Timeout | undefined;
  private lastKey = '';
  private drawn = false;
  private polling = false;
  private readonly onState = (event: SessionEvent): void => this.log(`session ${event}`);

  constructor(
    private readonly client: ZooKeeperClient,
    private readonly lockPath: string,
    private readonly ownerId: string,
    private readonly options: ProgressOptions,
  ) {}

  start(): void {
    if (!this.options.live && !this.options.verbose && !this.options.announce) return;
    if (this.options.verbose) this.client.on('state', this.onState);
    this.timer = setInterval(() => void this.poll(), POLL_MS);
    this.timer.unref();
  }

  /** Ends the queue display; session changes are still logged (with --verbose) until `close`. */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.clearLine();
  }

  close(): void {
    this.stop();
    this.client.off('state', this.onState);
  }

  /** With --verbose: one line of the change log. */
  log(line: string): void {
    if (this.options.verbose) this.say(line);
  }

  /** One line on stderr whatever the flags (what a wait for ZooKeeper must say), below the live line. */
  say(line: string): void {
    this.clearLine();
    process.stderr.write(`zklock: ${line}\n`);
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const wait = describeWait(await inspectLock(this.client, this.lockPath, { kind: this.options.kind }), this.ownerId);
      const { key, text } = wait;
      if (!this.timer) return;
      if (key !== this.lastKey) this.log(text);
      this.lastKey = key;
      if (!this.options.live && !this.options.verbose && wait.queued) {
        // Announcing only: once said, the wait has nothing more to show.
        this.say(text);
        this.stop();
        return;
      }
      if (this.options.live) {
        process.stderr.write(`\r\x1b[2K${liveLine(wait, process.stderr.columns || 80)}`);
        this.drawn = true;
      }
    } catch {
      // The lock path may not exist yet, or the connection is down: the next poll tries again.
    } finally {
      this.polling = false;
    }
  }

  private clearLine(): void {
    if (!this.drawn) return;
    process.stderr.write('\r\x1b[2K');
    this.drawn = false;
  }
}
