import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { formatAge } from '../timing.js';
import type { AdminAction, AdminActions } from './admin.js';
import { sameSecret } from './admin.js';
import type { LiveTree } from './live-tree.js';

/** Who the page is looking through: shown on the page, so an operator knows which ensemble and which credentials. */
export interface Identity {
  connect: string;
  tls: boolean;
  /** Auth schemes and user names (digest), never passwords. */
  auth: string[];
}

export interface UiServerOptions {
  host: string;
  port: number;
  tree: LiveTree;
  identity: Identity;
  /** Present only with --allow-admin. */
  admin?: AdminActions;
}

const ASSETS = new URL('./assets/', import.meta.url);
const SCRIPT_TYPE = 'text/javascript; charset=utf-8';
const TYPES: Record<string, string> = { 'app.js': SCRIPT_TYPE, 'app.css': 'text/css; charset=utf-8' };
/** A page that cannot keep up (a stalled tab) is dropped once this much is queued for it; its EventSource reconnects and starts from a fresh snapshot. */
const MAX_PENDING_BYTES = 64 * 1024 * 1024;
/** Pages open at once (so at most this many times MAX_PENDING_BYTES buffered); more are refused with 503. */
const MAX_CLIENTS = 32;
const MAX_BODY_BYTES = 4096;
const HEARTBEAT_MS = 15_000;

/**
 * No inline script or style, nothing from elsewhere: node data that slipped into markup could
 * not run even if the page's own escaping failed.
 */
const SECURITY_HEADERS = {
  'Content-Security-Policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

function loopback(host: string): boolean {
  return host === '127.0.0.1' || host === 'localhost' || host === '::1' || host === '[::1]';
}

function hostHeader(host: string, port: number): string {
  return `${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
}

/** The page (with SSE for changes and JSON posts for admin actions) on an HTTP server; resolves once listening. */
export class UiServer {
  /**
   * Made per run and printed in the address (?token=): only who can read zklock ui's output can
   * open the page. Exchanged for an HttpOnly cookie, which `/`, `/events` and `/api` require; a
   * port alone is open to every user of the host.
   */
  private readonly secret = randomBytes(24).toString('hex');
  private readonly server: Server;
  private readonly clients = new Set<ServerResponse>();
  private readonly allowedHosts = new Set<string>();
  private readonly page: string;
  private readonly assets = new Map<string, Buffer>();
  private heartbeat: NodeJS.Timeout | undefined;

  private constructor(private readonly options: UiServerOptions) {
    this.page = readFileSync(new URL('index.html', ASSETS), 'utf8');
    for (const name of Object.keys(TYPES)) this.assets.set(name, readFileSync(new URL(name, ASSETS)));
    // The page formats ages as the terminal commands do: the same function, as compiled.
    this.assets.set('format.js', Buffer.from(`'use strict';\n${formatAge.toString()}\n`));
    this.server = createServer((req, res) => this.handle(req, res));
    options.tree.on('change', (change) => this.broadcast('change', { ...change, now: Date.now() }));
    options.tree.on('status', (status) => this.broadcast('status', { status, now: Date.now() }));
  }

  static async start(options: UiServerOptions): Promise<UiServer> {
    const ui = new UiServer(options);
    await new Promise<void>((resolve, reject) => {
      ui.server.once('error', reject);
      ui.server.listen(options.port, options.host, () => resolve());
    });
    ui.allowHosts();
    ui.heartbeat = setInterval(() => {
      for (const res of ui.clients) res.write(': keep-alive\n\n');
    }, HEARTBEAT_MS);
    return ui;
  }

  get url(): string {
    const host = this.options.host === '0.0.0.0' || this.options.host === '::' ? '127.0.0.1' : this.options.host;
    return `http://${hostHeader(host, this.port)}/?token=${this.secret}`;
  }

  /** Cookies are shared by every port of a host: the port in the name keeps two runs apart. */
  private get cookieName(): string {
    return `zklock-ui-${this.port}`;
  }

  private signedIn(req: IncomingMessage): boolean {
    const prefix = `${this.cookieName}=`;
    const given = (req.headers.cookie ?? '').split(';').map((c) => c.trim()).find((c) => c.startsWith(prefix))?.slice(prefix.length);
    return given !== undefined && sameSecret(given, this.secret);
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    clearInterval(this.heartbeat);
    for (const res of this.clients) res.end();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /**
   * The Host names the page may be reached by. Anything else is refused: a page of another site
   * whose name was rebound to 127.0.0.1 (DNS rebinding) sends its own name as Host.
   */
  private allowHosts(): void {
    const { host } = this.options;
    const names = loopback(host) ? ['127.0.0.1', 'localhost', '::1'] : [host];
    if (host === '0.0.0.0' || host === '::') {
      names.push('127.0.0.1', 'localhost', '::1');
      for (const addresses of Object.values(networkInterfaces())) for (const a of addresses ?? []) names.push(a.address);
    }
    for (const name of names) this.allowedHosts.add(hostHeader(name, this.port).toLowerCase());
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    if (!this.allowedHosts.has((req.headers.host ?? '').toLowerCase())) return this.reply(res, 421, 'unknown Host: open the address zklock ui printed');
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://ui.invalid');
    } catch {
      // Node's parser lets through targets URL refuses (`GET http://[`): an answer, not a throw out of the server's handler.
      return this.reply(res, 400, 'bad request target');
    }
    const path = url.pathname;
    const asset = path.slice(1);
    // The page's script and style hold nothing secret: served to anyone.
    if (req.method === 'GET' && this.assets.has(asset)) {
      res.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': TYPES[asset] ?? SCRIPT_TYPE });
      return void res.end(this.assets.get(asset));
    }
    if (req.method === 'GET' && path === '/favicon.ico') return void res.writeHead(204, SECURITY_HEADERS).end();
    const token = url.searchParams.get('token');
    if (req.method === 'GET' && path === '/' && token !== null && sameSecret(token, this.secret)) {
      // Into a cookie, and off the address bar (and out of the history) at once.
      res.writeHead(303, { ...SECURITY_HEADERS, Location: '/', 'Set-Cookie': `${this.cookieName}=${this.secret}; HttpOnly; SameSite=Strict; Path=/` });
      return void res.end();
    }
    if (!this.signedIn(req)) {
      if (path.startsWith('/api/')) this.options.admin?.logRequest(path === '/api/release' ? 'release' : 'revoke', undefined, from(req), { status: 401, message: 'refused: not signed in' });
      return this.reply(res, 401, 'open the address zklock ui printed (with its ?token=)');
    }
    if (req.method === 'GET' && path === '/') return this.sendPage(res);
    if (req.method === 'GET' && path === '/events') return this.subscribe(req, res);
    if (req.method === 'POST' && (path === '/api/release' || path === '/api/revoke')) return void this.adminRequest(req, res, path === '/api/release' ? 'release' : 'revoke');
    this.reply(res, 404, 'not found');
  }

  private reply(res: ServerResponse, status: number, message: string): void {
    res.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify({ ok: status < 300, message }));
  }

  private sendPage(res: ServerResponse): void {
    // The token is hex from randomBytes: nothing in it needs escaping.
    const html = this.page.replace('{{ADMIN_TOKEN}}', this.options.admin?.token ?? '');
    res.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': 'text/html; charset=utf-8' });
    res.end(html);
  }

  private subscribe(req: IncomingMessage, res: ServerResponse): void {
    if (this.clients.size >= MAX_CLIENTS) return this.reply(res, 503, `at most ${MAX_CLIENTS} pages at once: close one`);
    res.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': 'text/event-stream; charset=utf-8', Connection: 'keep-alive' });
    const { tree, identity, admin } = this.options;
    this.send(res, 'hello', { root: tree.root, identity, admin: admin !== undefined, status: tree.status, locks: tree.model.all(), now: Date.now() });
    this.clients.add(res);
    req.on('close', () => this.clients.delete(res));
  }

  private broadcast(event: string, data: unknown): void {
    const frame = `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    for (const res of this.clients) {
      if (res.writableLength > MAX_PENDING_BYTES) {
        this.clients.delete(res);
        res.destroy();
      } else res.write(frame);
    }
  }

  private send(res: ServerResponse, event: string, data: unknown): void {
    res.write(`retry: 1000\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  private async adminRequest(req: IncomingMessage, res: ServerResponse, action: AdminAction): Promise<void> {
    const admin = this.options.admin;
    if (!admin) return this.reply(res, 403, 'admin actions are off: start zklock ui with --allow-admin');
    const refuse = (status: number, message: string, node?: string): void => {
      admin.logRequest(action, node, from(req), { status, message: `refused: ${message}` });
      this.reply(res, status, message);
    };
    // A form or fetch from another site carries its own Origin; a same-origin fetch carries ours.
    if (req.headers.origin !== `http://${req.headers.host ?? ''}`) return refuse(403, 'cross-origin request refused');
    if (!(req.headers['content-type'] ?? '').startsWith('application/json')) return refuse(415, 'send JSON');
    if (!admin.checkToken(req.headers['x-zklock-token'])) return refuse(403, 'missing or wrong admin token: reload the page');
    let text: string;
    try {
      text = await readBody(req);
    } catch (error) {
      if (!(error instanceof BodyTooLarge)) return refuse(400, 'the body could not be read');
      // The rest of the body is left unread: this connection cannot carry another request.
      res.setHeader('Connection', 'close');
      return refuse(413, `a body of at most ${MAX_BODY_BYTES} bytes is expected`);
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return refuse(400, 'the body is not JSON');
    }
    const node = typeof body === 'object' && body !== null && 'node' in body ? body.node : undefined;
    if (typeof node !== 'string') return refuse(400, 'expected { "node": "<contender path>" }');
    const result = await admin.run(action, node, from(req));
    this.reply(res, result.status, result.message);
  }
}

function from(req: IncomingMessage): string {
  return `${req.socket.remoteAddress ?? '?'}:${req.socket.remotePort ?? '?'}`;
}

class BodyTooLarge extends Error {}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        // Stop reading; the connection stays so the 413 can be sent (and is closed after it).
        req.removeAllListeners('data');
        req.pause();
        reject(new BodyTooLarge());
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
