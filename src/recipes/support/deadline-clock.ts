import { performance } from 'node:perf_hooks';
import { MAX_TIMER_MS } from '../../client/durations.js';

/** Something that must happen at `endAt` (a performance.now() time): an acquire's timeout. */
export interface Timed {
  readonly endAt: number;
  /** Its place in the clock's heap; -1 when not on the clock. Kept by the clock. */
  clockSlot: number;
  /** Called once at `endAt`, never before; not after it was taken off the clock. */
  expire(): void;
}

/**
 * One timer for every acquire's timeout in the process, instead of one each: a Node timer and the
 * closures that re-arm it cost about 450 bytes per waiter, 4.5 MB for 10,000 waiters, which the
 * memory goal (20 MB for 10,000) cannot spare; here a waiter costs a slot of this heap. The timer
 * is set for the earliest end and keeps the process alive, as each acquire's own timer did. A
 * timer may fire a little before its time by performance.now() (Node rounds to whole ms), and
 * setTimeout fires at once beyond MAX_TIMER_MS: whatever has not yet ended waits for the next one.
 */
const heap: Timed[] = [];
let timer: NodeJS.Timeout | undefined;
/** The end the timer was set for. */
let armedFor = Infinity;

/** Puts `timed` on the clock. */
export function schedule(timed: Timed): void {
  timed.clockSlot = heap.length;
  heap.push(timed);
  up(timed.clockSlot);
  arm();
}

/** Takes `timed` off the clock, if it is on it. */
export function unschedule(timed: Timed): void {
  const slot = timed.clockSlot;
  if (slot < 0) return;
  timed.clockSlot = -1;
  const last = heap.pop()!;
  if (slot < heap.length) {
    place(last, slot);
    down(up(slot));
  }
  // An empty clock must not keep the process alive; an earlier timer than needed only re-arms.
  if (heap.length === 0) disarm();
}

function arm(): void {
  const first = heap[0];
  if (!first || (timer && armedFor <= first.endAt)) return;
  disarm();
  armedFor = first.endAt;
  timer = setTimeout(tick, Math.min(Math.max(0, Math.ceil(first.endAt - performance.now())), MAX_TIMER_MS));
}

function disarm(): void {
  if (timer) clearTimeout(timer);
  timer = undefined;
  armedFor = Infinity;
}

function tick(): void {
  timer = undefined;
  armedFor = Infinity;
  const now = performance.now();
  try {
    while (heap.length > 0 && heap[0]!.endAt <= now) {
      const first = heap[0]!;
      unschedule(first);
      first.expire();
    }
  } finally {
    arm();
  }
}

function place(timed: Timed, slot: number): void {
  heap[slot] = timed;
  timed.clockSlot = slot;
}

/** Moves the entry at `slot` up while it ends before its parent; returns where it ended. */
function up(slot: number): number {
  const timed = heap[slot]!;
  while (slot > 0) {
    const parent = (slot - 1) >> 1;
    if (heap[parent]!.endAt <= timed.endAt) break;
    place(heap[parent]!, slot);
    slot = parent;
  }
  place(timed, slot);
  return slot;
}

/** Moves the entry at `slot` down while a child ends before it. */
function down(slot: number): void {
  const timed = heap[slot]!;
  for (;;) {
    const left = 2 * slot + 1;
    if (left >= heap.length) break;
    const right = left + 1;
    const child = right < heap.length && heap[right]!.endAt < heap[left]!.endAt ? right : left;
    if (heap[child]!.endAt >= timed.endAt) break;
    place(heap[child]!, slot);
    slot = child;
  }
  place(timed, slot);
}

/** The entries on the clock (for tests). */
export function scheduledCount(): number {
  return heap.length;
}
