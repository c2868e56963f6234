/**
 * What becomes of one request (one with a negative xid is always forwarded, see ProxyRequest):
 * - `forward`: it goes on to the server;
 * - `drop`: the server never sees it nor anything the client sends after it on this connection,
 *   which stays open (a half-open connection: the client hears nothing until its read deadline);
 * - `lose-reply`: it goes on to the server, which runs it; its reply is dropped and the connection
 *   reset in its place, so the client sees CONNECTIONLOSS for a request that did run;
 * - `{ delay }`: it, and everything the client sends after it on this connection, reaches the
 *   server that many ms later (order is kept);
 * - `{ delayReply }`: it goes on at once; its reply, and everything the server sends after it on
 *   this connection, reaches the client that many ms later (order is kept);
 * - `reset`: the connection is reset (TCP RST both ways) before the request, or anything that
 *   came with it in the same read, reaches the server: the client loses the connection with the
 *   request in flight, and the decider hears of no later request of this connection;
 * - `{ error }`: the server never sees it; the client gets a reply with that error code in its
 *   place and order. With `close: true` the connection closes right after that reply, as
 *   ZooKeeper 3.5 answers an operation it does not know (addWatch 106: UNIMPLEMENTED, -6).
 */
export type RequestVerdict =
  | 'forward'
  | 'reset'
  | 'drop'
  | 'lose-reply'
  | { readonly delay: number }
  | { readonly delayReply: number }
  | Refusal;

/** What a RequestFilter does to its connection (a ProxyConnection), besides handing it to the decider. */
export interface FilteredConnection {
  reset(): void;
  blackhole(direction: 'upstream'): void;
  holdUpstream(ms: number): void;
  holdDownstream(ms: number): void;
}

/** A request refused with an error (see RequestVerdict). */
type Refusal = { readonly error: number; readonly close?: boolean };

/** Longer than any frame a ZooKeeper peer sends: what starts with such a length is not ZooKeeper's framing (a TLS record, a four-letter word). */
const MAX_FRAME_BYTES = 64 * 1024 * 1024;
const EXISTS = 3;
const EMPTY: Buffer = Buffer.alloc(0);
/** The xid of every watch re-registration frame (setWatches, setWatches2). */
const SET_WATCHES_XID = -8;

/**
 * Splits one direction's bytes into ZooKeeper frames (a 4-byte length, then the payload), holding
 * a partial frame until the rest comes. A stream that is not framed so is passed on untouched.
 */
class Frames {
  #pending: Buffer = EMPTY;
  #first = true;
  #raw = false;

  constructor(private readonly onFrame: (frame: Buffer, first: boolean) => Buffer) {}

  push(chunk: Buffer): Buffer {
    if (this.#raw) return chunk;
    let data = this.#pending.length > 0 ? Buffer.concat([this.#pending, chunk]) : chunk;
    const out: Buffer[] = [];
    while (data.length >= 4) {
      const length = data.readInt32BE(0);
      if (length < 0 || length > MAX_FRAME_BYTES) {
        this.#raw = true;
        out.push(data);
        data = EMPTY;
        break;
      }
      if (data.length < 4 + length) break;
      out.push(this.onFrame(data.subarray(0, 4 + length), this.#first));
      this.#first = false;
      data = data.subarray(4 + length);
    }
    this.#pending = data;
    return out.length === 1 ? out[0]! : Buffer.concat(out);
  }
}

/**
 * A connection's requests put to `decide`. A refused request is replaced by `exists /` with the
 * same xid, and that reply's body by the error: the server answers in order, so the client's
 * replies stay in order too, and the error carries the server's real zxid.
 */
export class RequestFilter<C extends FilteredConnection> {
  /** Downstream bytes (as rewritten) after which the connection is to close; set once a reply asked for it. */
  closeAfter: number | undefined;
  readonly #refused = new Map<number, Refusal>();
  /** Each watch re-registration on its way, in order: its refusal, or undefined when forwarded (they share one xid). */
  readonly #reregistrations: (Refusal | undefined)[] = [];
  /** Requests forwarded whose replies are to be lost (see RequestVerdict). */
  readonly #repliesLost = new Set<number>();
  /** Requests forwarded whose replies are to be held back, and for how long. */
  readonly #repliesDelayed = new Map<number, number>();
  readonly #requests = new Frames((frame, first) => this.#request(frame, first));
  readonly #replies = new Frames((frame, first) => this.#reply(frame, first));
  #closing = false;
  #reset = false;
  #emitted = 0;

  constructor(
    private readonly connection: C,
    private readonly decide: (request: { readonly connection: C; readonly xid: number; readonly opcode: number }) => RequestVerdict,
  ) {}

  upstream(chunk: Buffer): Buffer {
    return chunk.length === 0 || this.#reset ? EMPTY : this.#requests.push(chunk);
  }

  downstream(chunk: Buffer): Buffer {
    const out = this.#replies.push(chunk);
    this.#emitted += out.length;
    if (this.#closing) this.closeAfter ??= this.#emitted;
    return out;
  }

  #request(frame: Buffer, first: boolean): Buffer {
    // The rest of the read that had a request reset: it never reaches the server, nor the decider.
    if (this.#reset) return EMPTY;
    // The connect request has no header; a frame shorter than one is passed on for the server to judge.
    if (first || frame.length < 12) return frame;
    const xid = frame.readInt32BE(4);
    // The client's own requests but its watch re-registrations (see ProxyRequest).
    if (xid < 0 && xid !== SET_WATCHES_XID) return frame;
    const verdict = this.decide({ connection: this.connection, xid, opcode: frame.readInt32BE(8) });
    if (xid === SET_WATCHES_XID) this.#reregistrations.push(typeof verdict === 'object' && 'error' in verdict ? verdict : undefined);
    if (verdict === 'forward') return frame;
    if (verdict === 'reset' || verdict === 'drop') {
      // Either way nothing more of this connection's requests reaches the server, nor the decider.
      this.#reset = true;
      if (verdict === 'reset') this.connection.reset();
      else this.connection.blackhole('upstream');
      return EMPTY;
    }
    if (verdict === 'lose-reply') {
      this.#repliesLost.add(xid);
      return frame;
    }
    if ('delay' in verdict) {
      this.connection.holdUpstream(verdict.delay);
      return frame;
    }
    if ('delayReply' in verdict) {
      this.#repliesDelayed.set(xid, verdict.delayReply);
      return frame;
    }
    if (xid !== SET_WATCHES_XID) this.#refused.set(xid, verdict);
    // xid, opcode, path "/" (length 1), watch false.
    const standIn = Buffer.alloc(18);
    standIn.writeInt32BE(14, 0);
    standIn.writeInt32BE(xid, 4);
    standIn.writeInt32BE(EXISTS, 8);
    standIn.writeInt32BE(1, 12);
    standIn.write('/', 16, 'latin1');
    standIn.writeUInt8(0, 17);
    return standIn;
  }

  #reply(frame: Buffer, first: boolean): Buffer {
    // Nothing after the reply the connection closes on: the server that closes sends no more.
    if (this.#closing) return EMPTY;
    // The connect response has no header; a reply header is xid, zxid, err (16 bytes).
    if (first || frame.length < 20) return frame;
    const xid = frame.readInt32BE(4);
    if (this.#repliesLost.has(xid)) {
      // The server ran it; the client hears only that the connection went (the rest of this read is lost with it).
      this.#closing = true;
      this.connection.reset();
      return EMPTY;
    }
    const delay = this.#repliesDelayed.get(xid);
    if (delay !== undefined) {
      this.#repliesDelayed.delete(xid);
      this.connection.holdDownstream(delay);
    }
    const refused = xid === SET_WATCHES_XID ? this.#reregistrations.shift() : this.#refused.get(xid);
    if (refused === undefined) return frame;
    this.#refused.delete(xid);
    const reply = Buffer.alloc(20);
    reply.writeInt32BE(16, 0);
    frame.copy(reply, 4, 4, 16);
    reply.writeInt32BE(refused.error, 16);
    this.#closing = refused.close === true;
    return reply;
  }
}
