import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HeldLock, HoldKind, Language, OperationRecord } from './history.js';
import { preciseNow } from './history.js';

export interface BeginRequest {
  id: string;
  worker: string;
  process: string;
  kind: HoldKind;
  locks: HeldLock[];
  language: Language;
  session: string;
  acquiredAt: number;
  holdMs?: number;
}

export interface EndRequest {
  id: string;
  lost?: string;
  lostAt?: number;
}

export interface ResourceReply {
  accepted: boolean;
  reason?: string;
}

/**
 * The protected resource: an HTTP service on loopback that records every operation and fences
 * exclusive holds. An operation has a begin and an end (its effects are committed at the end):
 * - begin is rejected when a fenced lock's token is lower than the highest that lock has seen;
 *   otherwise that token becomes the highest (a newer holder pre-empts an older one);
 * - end is rejected when a newer token began on one of its fenced locks meanwhile, so a stale
 *   holder (paused, partitioned) never commits over a newer one.
 * Tokens are compared per lock path; for a multi-lock each path is fenced with its own lease.
 */
export class FencedResource implements AsyncDisposable {
  readonly operations: OperationRecord[] = [];
  private readonly byId = new Map<string, OperationRecord>();
  /** Begun and not yet ended: what the nemesis polls every few milliseconds, without scanning the whole history. */
  private readonly open = new Set<OperationRecord>();
  private readonly highest = new Map<string, bigint>();

  private constructor(private readonly server: Server) {}

  static async start(): Promise<FencedResource> {
    // The handler runs only once listening, after `resource` is assigned.
    const server = createServer((request, response) => void resource.handle(request, response));
    const resource = new FencedResource(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    return resource;
  }

  get url(): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  /** Whether `process` has an exclusive (fenced) operation under way right now, meant to go on for `forMs` more. */
  busyExclusive(process: string, forMs = 0): boolean {
    const now = preciseNow();
    return [...this.open].some((op) => op.process === process && op.accepted && op.locks.some((l) => l.fenced) && op.start + (op.holdMs ?? 0) - now >= forMs);
  }

  begin(request: BeginRequest): ResourceReply {
    const record: OperationRecord = { ...request, start: preciseNow(), accepted: false };
    this.operations.push(record);
    this.byId.set(record.id, record);
    this.open.add(record);
    for (const held of request.locks.filter((l) => l.fenced)) {
      const highest = this.highest.get(held.lock);
      if (highest !== undefined && BigInt(held.token) < highest) {
        record.rejected = `token ${held.token} < ${highest} on ${held.lock}`;
        return { accepted: false, reason: record.rejected };
      }
    }
    for (const held of request.locks.filter((l) => l.fenced)) this.highest.set(held.lock, BigInt(held.token));
    record.accepted = true;
    return { accepted: true };
  }

  end(request: EndRequest): ResourceReply {
    const record = this.byId.get(request.id);
    if (!record || record.end !== undefined) return { accepted: false, reason: 'unknown operation' };
    record.end = preciseNow();
    this.open.delete(record);
    if (request.lost !== undefined) record.lost = request.lost;
    if (request.lostAt !== undefined) record.lostAt = request.lostAt;
    if (!record.accepted) return { accepted: false, reason: record.rejected };
    const superseded = record.locks.find((l) => l.fenced && this.highest.get(l.lock) !== BigInt(l.token));
    if (superseded) {
      record.accepted = false;
      record.rejected = `superseded on ${superseded.lock} by token ${String(this.highest.get(superseded.lock))}`;
      return { accepted: false, reason: record.rejected };
    }
    return { accepted: true };
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const body: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const reply = request.url === '/begin' ? this.begin(body as BeginRequest) : this.end(body as EndRequest);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
    } catch (error) {
      response.writeHead(400).end(String(error));
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
