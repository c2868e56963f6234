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

/** A wall clock finer than Date.now(), so back-to-back holds in different processes still order correctly. */
export function preciseNow(): number {
  return performance.timeOrigin + performance.now();
}
