/**
 * Which requests one contended cycle sends, request by request: `sessions` sessions loop
 * acquire → release on one lock (bench S2's shape) through a FaultProxy whose chunk listener
 * decodes every request frame (opcode, path, watch flag) and every create's reply (the session's
 * own node). Each request is named by its opcode and the role of its path: the session's own
 * node, another contender, the lock path, elsewhere. Counted only on the timed lock path (the
 * warm-up's and other paths apart), divided by the cycles (releases: deletes of contender nodes).
 *
 * `node --import tsx bench/request-census.ts [zklock|curator|both] [seconds]`
 */
import { performance } from 'node:perf_hooks';
import { ZooKeeperClient } from '../src/index.js';
import { Mutex } from '../src/index.js';
import { FaultProxy, ZooKeeperServer } from '../src/testing/index.js';
import type { ProxyChunkEvent } from '../src/testing/index.js';
import { runCurator } from './peers/curator.js';

const OPS: Record<number, string> = {
  1: 'create', 2: 'delete', 3: 'exists', 4: 'getData', 5: 'setData', 6: 'getACL', 7: 'setACL', 8: 'getChildren',
  9: 'sync', 11: 'ping', 12: 'getChildren2', 13: 'check', 14: 'multi', 15: 'create2', 18: 'removeWatches',
  19: 'createContainer', 21: 'createTTL', 22: 'multiRead', 101: 'setWatches', 105: 'setWatches2', 106: 'addWatch', [-2]: 'ping', [-4]: 'auth', [-11]: 'closeSession',
};
const PATH_FIRST = new Set([1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 15, 18, 19, 21, 106]);
const WATCHABLE = new Set([3, 4, 8, 12]);

class Reader {
  at = 0;
  constructor(readonly b: Buffer) {}
  int(): number {
    const v = this.b.readInt32BE(this.at);
    this.at += 4;
    return v;
  }
  bool(): boolean {
    return this.b[this.at++] !== 0;
  }
  str(): string {
    const n = this.int();
    if (n < 0) return '';
    const s = this.b.toString('utf8', this.at, this.at + n);
    this.at += n;
    return s;
  }
  skipBuffer(): void {
    const n = this.int();
    if (n > 0) this.at += n;
  }
}

interface Req {
  op: string;
  path: string;
  watch?: boolean;
  /** For multi / multiRead: the ops inside. */
  inner?: { op: string; path: string }[];
}

function parseMultiOps(r: Reader, read: boolean): { op: string; path: string }[] {
  const ops: { op: string; path: string }[] = [];
  for (;;) {
    const type = r.int();
    const done = r.bool();
    r.int();
    if (done || type === -1) return ops;
    const path = r.str();
    ops.push({ op: OPS[type] ?? String(type), path });
    if (read) {
      r.bool();
      continue;
    }
    switch (type) {
      case 1: case 15: case 19: case 21: {
        r.skipBuffer();
        const acls = r.int();
        for (let i = 0; i < acls; i++) {
          r.int();
          r.str();
          r.str();
        }
        r.int();
        if (type === 21) r.at += 8;
        break;
      }
      case 2: case 13: r.int(); break;
      case 5: r.skipBuffer(); r.int(); break;
      default: return ops;
    }
  }
}

/** Decodes one connection's frames in one direction, across chunks. */
class Frames {
  private buf: Buffer = Buffer.alloc(0);
  constructor(private readonly onFrame: (frame: Buffer) => void) {}
  push(chunk: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    while (this.buf.length >= 4) {
      const n = this.buf.readInt32BE(0);
      if (this.buf.length < 4 + n) return;
      const frame = this.buf.subarray(4, 4 + n);
      this.buf = this.buf.subarray(4 + n);
      this.onFrame(frame);
    }
  }
}

interface Conn {
  up: Frames;
  down: Frames;
  /** The first frame each way is the handshake. */
  upSeen: boolean;
  downSeen: boolean;
  xids: Map<number, number>;
  own: Set<string>;
  fourLetter: boolean;
}

export class Census {
  readonly counts = new Map<string, number>();
  cycles = 0;
  private readonly conns = new Map<unknown, Conn>();
  counting: () => boolean = () => true;

  constructor(readonly lockPath: string) {}

  listen(event: ProxyChunkEvent): void {
    if (event.dropped) return;
    let c = this.conns.get(event.connection);
    if (!c) {
      const conn: Conn = {
        upSeen: false, downSeen: false, xids: new Map(), own: new Set(), fourLetter: false,
        up: new Frames((f) => this.request(conn, f)),
        down: new Frames((f) => this.reply(conn, f)),
      };
      c = conn;
      this.conns.set(event.connection, c);
      if (event.direction === 'upstream' && /^[a-z]{4}$/.test(event.chunk.toString('latin1', 0, 4))) c.fourLetter = true;
    }
    if (c.fourLetter) return;
    (event.direction === 'upstream' ? c.up : c.down).push(event.chunk);
  }

  private request(c: Conn, f: Buffer): void {
    if (!c.upSeen) {
      c.upSeen = true;
      return;
    }
    const r = new Reader(f);
    const xid = r.int();
    const type = r.int();
    c.xids.set(xid, type);
    const req: Req = { op: OPS[type] ?? String(type), path: '' };
    if (PATH_FIRST.has(type)) {
      req.path = r.str();
      if (WATCHABLE.has(type)) req.watch = r.bool();
    } else if (type === 14 || type === 22) req.inner = parseMultiOps(r, type === 22);
    if (this.counting()) this.count(c, req);
  }

  private reply(c: Conn, f: Buffer): void {
    if (!c.downSeen) {
      c.downSeen = true;
      return;
    }
    const r = new Reader(f);
    const xid = r.int();
    r.at += 8;
    const err = r.int();
    const type = c.xids.get(xid);
    c.xids.delete(xid);
    if (err === 0 && (type === 1 || type === 15 || type === 19)) c.own.add(r.str());
  }

  private role(c: Conn, path: string): string {
    if (path === this.lockPath) return 'lock path';
    if (path.startsWith(this.lockPath + '/')) return c.own.has(path) ? 'own node' : 'other contender';
    return path === '/' ? '/' : 'elsewhere';
  }

  private count(c: Conn, req: Req): void {
    let key: string;
    if (req.inner) {
      const inner = req.inner.map((i) => `${i.op}(${this.role(c, i.path)})`);
      if (req.inner.every((i) => this.role(c, i.path) === 'elsewhere')) return;
      const distinct = [...new Set(inner)];
      key = `${req.op}[${distinct.map((d) => `${inner.filter((x) => x === d).length}×${d}`).join(', ')}]`;
      if (req.inner.some((i) => i.op === 'delete' && i.path.startsWith(this.lockPath + '/'))) this.cycles++;
    } else {
      // A create names a prefix, not its node: the server appends the sequence.
      const creates = req.op.startsWith('create') && req.path.startsWith(this.lockPath + '/');
      const role = creates ? 'new contender' : req.path ? this.role(c, req.path) : '';
      if (role === 'elsewhere') return;
      key = `${req.op}${req.watch ? '+watch' : ''}${role ? ` (${role})` : ''}`;
      if (req.op === 'delete' && req.path.startsWith(this.lockPath + '/')) this.cycles++;
    }
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  table(title: string): string {
    const rows = [...this.counts].sort((a, b) => b[1] - a[1]);
    const total = rows.filter(([k]) => !k.startsWith('ping')).reduce((s, [, n]) => s + n, 0);
    const lines = rows.map(([k, n]) => `  ${(n / this.cycles).toFixed(3).padStart(7)}  ${k}  (${n})`);
    return `${title}: ${this.cycles} cycles, ${(total / this.cycles).toFixed(3)} requests per cycle (pings apart)\n${lines.join('\n')}`;
  }
}

async function zklockRun(server: ZooKeeperServer, seconds: number, sessions: number): Promise<string> {
  const lockPath = '/census/zklock/lock-0';
  const census = new Census(lockPath);
  let timed = false;
  census.counting = () => timed;
  const proxy = await FaultProxy.start({ targetPort: server.port });
  proxy.onChunk((e) => census.listen(e));
  const clients = await Promise.all(Array.from({ length: sessions }, () => ZooKeeperClient.connect(`127.0.0.1:${proxy.port}`, { sessionTimeout: 30_000 })));
  try {
    const loop = async (path: string, ms: number): Promise<number> => {
      const deadline = performance.now() + ms;
      let ops = 0;
      await Promise.all(clients.map(async (client) => {
        const mutex = new Mutex(client, path);
        while (performance.now() < deadline) {
          const lease = await mutex.acquire({ timeout: 60_000 });
          ops++;
          await lease.release();
        }
      }));
      return ops;
    };
    await loop('/census/zklock/warmup', 1000);
    timed = true;
    const ops = await loop(lockPath, seconds * 1000);
    timed = false;
    return `${census.table(`zklock (${sessions} sessions, one Mutex each; ${ops} acquires)`)}`;
  } finally {
    await Promise.all(clients.map((c) => c.close()));
    await proxy.close();
  }
}

async function curatorRun(server: ZooKeeperServer, seconds: number, sessions: number): Promise<string> {
  const root = '/census/curator';
  const census = new Census(`${root}/lock-0`);
  const proxy = await FaultProxy.start({ targetPort: server.port });
  proxy.onChunk((e) => census.listen(e));
  try {
    const result = await runCurator(`127.0.0.1:${proxy.port}`, { scenario: 'contend', root, sessions, locks: 1, durationMs: seconds * 1000 });
    return census.table(`Curator 5.4 InterProcessMutex (${sessions} sessions; ${result.ops} acquires)`);
  } finally {
    await proxy.close();
  }
}

const which = process.argv[2] ?? 'both';
const seconds = Number(process.argv[3] ?? 5);
const sessions = Number(process.argv[4] ?? 8);
const server = await ZooKeeperServer.start();
try {
  if (which !== 'curator') console.log(await zklockRun(server, seconds, sessions));
  if (which !== 'zklock') console.log(await curatorRun(server, seconds, sessions));
} finally {
  await server.stop();
}
