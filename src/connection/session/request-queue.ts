import type { Writer } from '../../protocol/index.js';
import { Fifo } from '../fifo.js';
import { FrameQueue } from '../socket/frame-queue.js';
import type { Packet, PacketOwner } from './packet.js';

/**
 * Requests not yet written, in call order, each with its frame. ZooKeeper runs a session's
 * requests in the order it receives them, and callers (the recipes) rely on that order, so
 * nothing overtakes here: requests leave at the head only, written, or dropped once they settled
 * while queued (a timeout, an abort) — at once when they are at the head, else when the head
 * reaches them. Packets and frames are two FIFOs in lockstep: the head frame is the head
 * packet's.
 */
export class RequestQueue implements PacketOwner {
  private packets = new Fifo<Packet>();
  private readonly frames: FrameQueue;
  /** Queued requests not settled. */
  waiting = 0;
  /**
   * How many packets at the head the wait for a connection need not be checked for again: each
   * settled, bounded by its own timeout, or already handed over to fail (see nextWaitBounded).
   */
  private waitChecked = 0;

  /** `sink` writes the frames taken: called from takeNext() (at the end of a chunk), flush(), and when a settled request breaks a run. */
  constructor(sink: (bytes: Buffer) => void) {
    this.frames = new FrameQueue(sink);
  }

  /**
   * Requests held, settled ones included: one that timed out behind a head that does not move
   * keeps its place (and its frame) until the head reaches it. What `maxQueued` bounds, so that
   * the bound holds for memory too, whatever becomes of the requests.
   */
  get held(): number {
    return this.packets.length;
  }

  /** Queues `packet` with the frame `w` holds (and leaves `w` ready for the next frame). */
  push(packet: Packet, w: Writer): void {
    this.frames.push(w);
    this.packets.push(packet);
    packet.owner = this;
    this.waiting++;
  }

  /**
   * Takes the next request that has not settled, with `xid` written into its frame (which goes
   * out with the next flush, along with the frames taken after it); undefined when none is left.
   */
  takeNext(xid: number): Packet | undefined {
    this.dropSettled();
    const packet = this.shift();
    if (!packet) return undefined;
    packet.owner = undefined;
    this.waiting--;
    this.frames.take(xid);
    return packet;
  }

  /** Writes what takeNext() took. */
  flush(): void {
    this.frames.flush();
  }

  settledWhileQueued(packet: Packet): void {
    this.waiting--;
    if (this.packets.peek() === packet) this.dropSettled();
  }

  /** Removes every request (their frames go too), oldest first, for failing them. */
  takeAll(): Fifo<Packet> {
    const all = this.packets;
    this.packets = new Fifo();
    this.frames.clear();
    this.waiting = 0;
    this.waitChecked = 0;
    for (let i = 0; i < all.length; i++) all.at(i)!.owner = undefined;
    return all;
  }

  /**
   * The oldest queued request whose wait for a connection the session bounds (not settled, no
   * timeout of its own), from where the last call left off: their deadlines grow along the queue,
   * so the session checks them from the head and stops at the first one not due. Call
   * passWaitBounded() to go past the one returned.
   */
  nextWaitBounded(): Packet | undefined {
    for (; this.waitChecked < this.packets.length; this.waitChecked++) {
      const packet = this.packets.at(this.waitChecked)!;
      if (!packet.settled && !packet.hasTimeout) return packet;
    }
    return undefined;
  }

  passWaitBounded(): void {
    this.waitChecked++;
  }

  private dropSettled(): void {
    while (this.packets.peek()?.settled) {
      this.shift();
      this.frames.skip();
    }
  }

  private shift(): Packet | undefined {
    const packet = this.packets.shift();
    if (packet && this.waitChecked > 0) this.waitChecked--;
    return packet;
  }
}
