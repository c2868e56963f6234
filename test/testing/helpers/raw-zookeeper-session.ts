// A deliberately tiny ZooKeeper wire client, so the harness tests prove real sessions and real
// znodes without depending on the project's own client (which they must not trust yet).
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';

const OP_CREATE = 1;
const OP_GET_DATA = 4;
const OP_CREATE_TTL = 21;
const OP_AUTH = 100;
const AUTH_XID = -4;
const RESPONSE_TIMEOUT_MS = 5_000;

/** ZooKeeper error codes the tests look at. */
export const ZOK = 0;
export const ZNOAUTH = -102;
export const ZNODEEXISTS = -110;

/** CreateMode.PERSISTENT_WITH_TTL. */
export const PERSISTENT_WITH_TTL = 5;

export interface Acl {
  readonly perms: number;
  readonly scheme: string;
  readonly id: string;
}

export const OPEN_ACL: readonly Acl[] = [{ perms: 31, scheme: 'world', id: 'anyone' }];

class Writer {
  readonly #parts: Buffer[] = [];
  int(value: number): this {
    const b = Buffer.alloc(4);
    b.writeInt32BE(value);
    this.#parts.push(b);
    return this;
  }
  long(value: bigint): this {
    const b = Buffer.alloc(8);
    b.writeBigInt64BE(value);
    this.#parts.push(b);
    return this;
  }
  bool(value: boolean): this {
    this.#parts.push(Buffer.from([value ? 1 : 0]));
    return this;
  }
  raw(value: Buffer): this {
    this.#parts.push(value);
    return this;
  }
  buffer(value: Buffer): this {
    return this.int(value.length).raw(value);
  }
  string(value: string): this {
    return this.buffer(Buffer.from(value, 'utf8'));
  }
  frame(): Buffer {
    const body = this.bytes();
    return new Writer().buffer(body).bytes();
  }
  bytes(): Buffer {
    return Buffer.concat(this.#parts);
  }
}

interface Reply {
  readonly err: number;
  readonly body: Buffer;
}

/** A ZooKeeper session over a connected socket (plain or TLS). */
export class RawZooKeeperSession {
  readonly sessionId: bigint;
  /** The session timeout the server granted, ms. */
  readonly negotiatedTimeoutMs: number;
  readonly #socket: Socket | TLSSocket;
  readonly #frames: Buffer[];
  readonly #waiters: ((frame: Buffer) => void)[];
  #nextXid = 1;

  private constructor(socket: Socket | TLSSocket, frames: Buffer[], waiters: ((frame: Buffer) => void)[], response: Buffer) {
    this.#socket = socket;
    this.#frames = frames;
    this.#waiters = waiters;
    this.negotiatedTimeoutMs = response.readInt32BE(4);
    this.sessionId = response.readBigInt64BE(8);
  }

  /** Plain TCP to 127.0.0.1:`port`. */
  static async connect(port: number, requestedTimeoutMs = 10_000): Promise<RawZooKeeperSession> {
    const socket = connect({ host: '127.0.0.1', port });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    return RawZooKeeperSession.handshake(socket, requestedTimeoutMs);
  }

  /** Sends the ConnectRequest on an already connected socket and waits for the ConnectResponse. */
  static async handshake(socket: Socket | TLSSocket, requestedTimeoutMs = 10_000): Promise<RawZooKeeperSession> {
    const frames: Buffer[] = [];
    const waiters: ((frame: Buffer) => void)[] = [];
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
        const frame = pending.subarray(4, 4 + pending.readInt32BE(0));
        pending = pending.subarray(4 + frame.length);
        // The waiter removes itself from the list when it settles.
        const waiter = waiters[0];
        if (waiter === undefined) frames.push(frame);
        else waiter(frame);
      }
    });
    socket.write(
      new Writer()
        .int(0)
        .long(0n)
        .int(requestedTimeoutMs)
        .long(0n)
        .buffer(Buffer.alloc(16))
        .bool(false)
        .frame(),
    );
    const response = await nextFrame(socket, frames, waiters);
    return new RawZooKeeperSession(socket, frames, waiters, response);
  }

  async #request(xid: number, op: number, body: Buffer): Promise<Reply> {
    this.#socket.write(new Writer().int(xid).int(op).raw(body).frame());
    // Skip watch notifications (xid -1) and pings (xid -2); the tests set no watches, but be safe.
    while (true) {
      const frame = await nextFrame(this.#socket, this.#frames, this.#waiters);
      if (frame.readInt32BE(0) === xid) return { err: frame.readInt32BE(12), body: frame.subarray(16) };
    }
  }

  /** create (or createTTL when `ttl` is given); resolves with the ZooKeeper error code. */
  async create(path: string, data: string, options: { flags?: number; ttl?: bigint; acl?: readonly Acl[] } = {}): Promise<number> {
    const body = new Writer().string(path).buffer(Buffer.from(data)).int((options.acl ?? OPEN_ACL).length);
    for (const acl of options.acl ?? OPEN_ACL) body.int(acl.perms).string(acl.scheme).string(acl.id);
    body.int(options.flags ?? 0);
    if (options.ttl !== undefined) body.long(options.ttl);
    const reply = await this.#request(this.#nextXid++, options.ttl === undefined ? OP_CREATE : OP_CREATE_TTL, body.bytes());
    return reply.err;
  }

  /** getData without a watch; `data` is set when `err` is 0. */
  async getData(path: string): Promise<{ err: number; data?: string }> {
    const reply = await this.#request(this.#nextXid++, OP_GET_DATA, new Writer().string(path).bool(false).bytes());
    if (reply.err !== ZOK) return { err: reply.err };
    const length = reply.body.readInt32BE(0);
    return { err: ZOK, data: reply.body.subarray(4, 4 + Math.max(0, length)).toString('utf8') };
  }

  /** addAuth; resolves with the error code of the auth reply. */
  async addAuth(scheme: string, auth: string): Promise<number> {
    const reply = await this.#request(AUTH_XID, OP_AUTH, new Writer().int(0).string(scheme).buffer(Buffer.from(auth)).bytes());
    return reply.err;
  }

  close(): void {
    this.#socket.destroy();
  }
}

function nextFrame(socket: Socket | TLSSocket, frames: Buffer[], waiters: ((frame: Buffer) => void)[]): Promise<Buffer> {
  const ready = frames.shift();
  if (ready !== undefined) return Promise.resolve(ready);
  return new Promise((resolve, reject) => {
    const settle = (): void => {
      clearTimeout(timer);
      socket.off('close', onClose);
      const index = waiters.indexOf(waiter);
      if (index >= 0) waiters.splice(index, 1);
    };
    const waiter = (frame: Buffer): void => {
      settle();
      resolve(frame);
    };
    const fail = (reason: Error): void => {
      settle();
      reject(reason);
    };
    const timer = setTimeout(() => fail(new Error(`no ZooKeeper response within ${RESPONSE_TIMEOUT_MS} ms`)), RESPONSE_TIMEOUT_MS);
    const onClose = (): void => fail(new Error('connection closed before the ZooKeeper response'));
    socket.once('close', onClose);
    waiters.push(waiter);
  });
}
