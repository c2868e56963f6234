import assert from 'node:assert/strict';

/** One hold of a lock as its holder saw it, on the clock every process here shares (sharedNow in test/recipes/fixtures.ts). */
export interface HoldInterval {
  who: string;
  start: number;
  end: number;
  /** An exclusive hold (a mutex, a writer) overlaps no other hold; shared ones (readers) overlap each other. */
  exclusive: boolean;
}

/** Never an exclusive hold beside any other: the independent check of a mutex or a read/write lock. */
export function assertExclusion(intervals: readonly HoldInterval[]): void {
  const sorted = [...intervals].sort((a, b) => a.start - b.start);
  for (let i = 0; i < sorted.length; i++) {
    for (let j = i + 1; j < sorted.length && sorted[j]!.start < sorted[i]!.end; j++) {
      const [a, b] = [sorted[i]!, sorted[j]!];
      assert.ok(!a.exclusive && !b.exclusive, `${a.who} [${a.start}, ${a.end}] overlaps ${b.who} [${b.start}, ${b.end}]`);
    }
  }
}

/** The most holds in progress at one instant (a hold ending when another starts does not count as both). */
export function mostAtOnce(intervals: readonly HoldInterval[]): number {
  // Ends sort before starts at the same instant: a handoff is not an overlap.
  const edges = intervals.flatMap((i) => [{ at: i.start, step: 1 }, { at: i.end, step: -1 }]).sort((a, b) => a.at - b.at || a.step - b.step);
  let now = 0;
  let most = 0;
  for (const { step } of edges) most = Math.max(most, (now += step));
  return most;
}

/**
 * How often the lock changed sides from one hold to the next, in order of start: contenders that
 * truly ran at once hand over between sides; ones that ran one after the other change once at most.
 */
export function sideChanges(intervals: readonly HoldInterval[], side: (interval: HoldInterval) => string): number {
  const sides = [...intervals].sort((a, b) => a.start - b.start).map(side);
  return sides.filter((s, i) => i > 0 && s !== sides[i - 1]).length;
}
