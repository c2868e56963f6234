import { readFileSync } from 'node:fs';

/** What a demo worker appends (one JSON line) for every time it held a lock. */
export interface HoldRecord {
  worker: string;
  lock: string;
  node: string;
  /** Decimal string: the lease's fencing token is a 64-bit zxid. */
  token: string;
  /** Epoch ms with sub-ms precision: acquired, and released (or lost). */
  start: number;
  end: number;
  /** Set when the lease's signal aborted while holding (the reason). */
  lost?: string;
}

/** Every record in the given JSONL files; a line being written right now is skipped, not fatal. */
export function readRecords(files: readonly string[]): HoldRecord[] {
  const records: HoldRecord[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue; // the worker has not written yet
    }
    for (const line of text.split('\n')) {
      if (!line) continue;
      try {
        records.push(JSON.parse(line) as HoldRecord);
      } catch {
        // a partial last line: read again on the next refresh
      }
    }
  }
  return records;
}

/**
 * Milliseconds on the kernel's monotonic clock, finer than Date.now() and read alike by every
 * process of this machine, so back-to-back holds in different processes still order correctly.
 * (performance.timeOrigin + performance.now() does not: each process fixes its origin at start,
 * and origins differed by up to 11 ms between processes under load, faking overlaps.)
 */
export function preciseNow(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
