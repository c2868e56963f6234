import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { performance } from 'node:perf_hooks';
import type { Timed } from '../../src/recipes/support/deadline-clock.js';
import { schedule, scheduledCount, unschedule } from '../../src/recipes/support/deadline-clock.js';

/** Timers of this process, as Node counts its active resources. */
function activeTimers(): number {
  return process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
}

class Entry implements Timed {
  clockSlot = -1;
  firedAt: number | undefined;
  constructor(
    readonly endAt: number,
    private readonly fired: Entry[],
  ) {}
  expire(): void {
    this.firedAt = performance.now();
    this.fired.push(this);
  }
}

describe('the deadline clock', () => {
  it('fires every entry once, in the order of their ends and never before its end, whatever was taken off meanwhile', async () => {
    const fired: Entry[] = [];
    const now = performance.now();
    // Pseudo-random but fixed: ends within 0-300 ms, some equal, a third taken off again.
    let seed = 7;
    const random = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const entries = Array.from({ length: 600 }, () => new Entry(now + Math.floor(random() * 60) * 5, fired));
    for (const entry of entries) schedule(entry);
    const cancelled = entries.filter((_, i) => i % 3 === 1);
    for (const entry of cancelled) unschedule(entry);
    // Taking one off twice, or one never scheduled, changes nothing.
    unschedule(cancelled[0]!);
    unschedule(new Entry(now, fired));
    assert.equal(scheduledCount(), entries.length - cancelled.length);
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.equal(scheduledCount(), 0);
    assert.equal(fired.length, entries.length - cancelled.length);
    assert.ok(cancelled.every((entry) => entry.firedAt === undefined), 'an entry taken off never fires');
    for (const entry of fired) assert.ok(entry.firedAt! >= entry.endAt, `fired ${entry.endAt - entry.firedAt!} ms early`);
    for (let i = 1; i < fired.length; i++) assert.ok(fired[i - 1]!.endAt <= fired[i]!.endAt, 'in the order of their ends');
  });

  it('is one timer for any number of entries, and none once empty: a pending acquire keeps the process alive, an empty clock does not', () => {
    const before = activeTimers();
    const far = performance.now() + 3_600_000;
    const entries = Array.from({ length: 1000 }, (_, i) => new Entry(far + i, []));
    for (const entry of entries) schedule(entry);
    assert.equal(activeTimers() - before, 1);
    // Taken off in any order; the last one leaves no timer behind.
    for (const entry of entries.reverse()) unschedule(entry);
    assert.equal(activeTimers(), before);
  });
});
