/** Below this many slots a ring does not shrink: not worth a copy. */
const MIN_SHRINK_SLOTS = 1024;

/**
 * A FIFO on a ring buffer: O(1) push and shift, 8 bytes a slot, and no copying but when it
 * doubles on a full ring or halves on one three quarters empty (a backlog of a million requests
 * moves each slot about once, where an array with a moving head would be sliced over and over as
 * it drains, and the ring does not keep a burst's size for ever).
 */
export class Fifo<T> {
  private slots: (T | undefined)[] = new Array<T | undefined>(16);
  /** slots.length - 1: the capacity is a power of two, so an index wraps with a mask. */
  private mask = 15;
  private head = 0;
  private size = 0;

  get length(): number {
    return this.size;
  }

  push(item: T): void {
    if (this.size > this.mask) this.resize(this.slots.length * 2);
    this.slots[(this.head + this.size) & this.mask] = item;
    this.size++;
  }

  peek(): T | undefined {
    return this.size > 0 ? this.slots[this.head] : undefined;
  }

  /** The item `index` places after the oldest. */
  at(index: number): T | undefined {
    return index >= 0 && index < this.size ? this.slots[(this.head + index) & this.mask] : undefined;
  }

  last(): T | undefined {
    return this.size > 0 ? this.slots[(this.head + this.size - 1) & this.mask] : undefined;
  }

  shift(): T | undefined {
    if (this.size === 0) return undefined;
    const item = this.slots[this.head];
    this.slots[this.head] = undefined;
    this.head = (this.head + 1) & this.mask;
    this.size--;
    if (this.slots.length > MIN_SHRINK_SLOTS && this.size < this.slots.length / 4) this.resize(this.slots.length / 2);
    return item;
  }

  private resize(capacity: number): void {
    const slots = new Array<T | undefined>(capacity);
    for (let i = 0; i < this.size; i++) slots[i] = this.slots[(this.head + i) & this.mask];
    this.slots = slots;
    this.mask = slots.length - 1;
    this.head = 0;
  }
}
