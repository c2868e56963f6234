import type { LockState } from '../../index.js';
import { holdingText } from '../contender-format.js';
import type { HoldRecord } from './record.js';

export interface LockView {
  lock: string;
  state: LockState | undefined;
  records: readonly HoldRecord[];
}

/** One line per lock: holder and for how long, queue, acquisitions so far, the latest fencing token. */
export function renderLocks(views: readonly LockView[], now = Date.now()): string[] {
  return views.map(({ lock, state, records }) => {
    const holder = state?.holders[0];
    const held = holder ? `${holder.owner.id} (${holdingText(holder, now)})` : '-';
    const queue = state?.waiters.map((w) => w.owner.id).join(' ') || '-';
    const last = records.filter((r) => r.lock === lock).at(-1);
    const count = records.filter((r) => r.lock === lock).length;
    return `${lock.padEnd(22)} holder ${held.padEnd(18)} acquisitions ${String(count).padStart(4)}  last token ${(last?.token ?? '-').padEnd(12)} queue ${queue}`;
  });
}

/**
 * Draws the view: on a terminal the same block is redrawn in place (cursor up, clear line);
 * otherwise each refresh is printed as plain lines, so logs stay readable.
 */
export class Screen {
  private drawnLines = 0;

  constructor(private readonly tty: boolean) {}

  draw(lines: readonly string[]): void {
    if (!this.tty) {
      process.stdout.write(`${lines.join('\n')}\n`);
      return;
    }
    const width = Math.max(40, (process.stdout.columns || 120) - 1);
    let out = this.drawnLines > 0 ? `\x1b[${this.drawnLines}A` : '';
    for (const line of lines) out += `\r\x1b[2K${line.slice(0, width)}\n`;
    process.stdout.write(out);
    this.drawnLines = lines.length;
  }

  /** Leaves the block as drawn: later output goes below it instead of replacing it. */
  keep(): void {
    this.drawnLines = 0;
  }

  /** An event line above the live block (the block is redrawn below it on the next refresh). */
  event(line: string): void {
    if (this.tty && this.drawnLines > 0) {
      process.stdout.write(`\x1b[${this.drawnLines}A\r\x1b[J`);
      this.drawnLines = 0;
    }
    process.stdout.write(`${line}\n`);
  }
}
