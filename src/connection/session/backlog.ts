import { Fifo } from '../fifo.js';
import type { Packet } from './packet.js';

/**
 * Requests failed per turn of the event loop. Their callers' rejection handlers run right after
 * each slice, so this also bounds how much of their code one turn runs: at a few µs per request
 * and handler, a slice blocks the loop for milliseconds.
 */
const SLICE = 1000;

interface Batch {
  packets: Fifo<Packet>;
  error: (packet: Packet) => unknown;
}

/**
 * Fails requests in order, a slice per turn of the event loop. Failing a backlog in one go (a
 * connection loss or close() with hundreds of thousands of requests) blocked the loop for as long
 * as it took, starving the pings of every other session in the process. The first slice fails at
 * once, so a short list fails synchronously, as before. Batches fail in the order they came, and
 * `busy` stays true until the last one has: the session writes no request meanwhile, so no reply
 * can overtake a rejection of an older request.
 */
export class Backlog {
  private readonly batches = new Fifo<Batch>();
  private running = false;
  private waiters: (() => void)[] = [];
  private readonly next = (): void => this.slice();

  /** `onIdle` is called when the last request has failed, after a backlog that took more than one slice. */
  constructor(private readonly onIdle: () => void) {}

  get busy(): boolean {
    return this.running;
  }

  /** Resolves once every request handed over has failed. */
  idle(): Promise<void> {
    return this.running ? new Promise((resolve) => this.waiters.push(resolve)) : Promise.resolve();
  }

  /** Fails `packets` (those not settled meanwhile), oldest first, after the batches handed over before, each with `error(packet)`. */
  fail(packets: Fifo<Packet>, error: (packet: Packet) => unknown): void {
    if (packets.length === 0) return;
    this.batches.push({ packets, error });
    if (this.running) return;
    this.running = true;
    this.slice(true);
  }

  private slice(first = false): void {
    for (let budget = SLICE; budget > 0 && this.batches.length > 0; budget--) {
      const batch = this.batches.peek()!;
      const packet = batch.packets.shift()!;
      if (batch.packets.length === 0) this.batches.shift();
      if (!packet.settled) packet.fail(batch.error(packet));
    }
    if (this.batches.length > 0) {
      setImmediate(this.next);
      return;
    }
    this.running = false;
    for (const resolve of this.waiters.splice(0)) resolve();
    if (!first) this.onIdle();
  }
}
