import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { get } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import type { Lease } from '../../src/index.js';
import { Mutex, Perms, ReadWriteLock, Semaphore, SimpleLock, ZooKeeperClient } from '../../src/index.js';
import { FaultProxy, ZooKeeperServer, asZooKeeper35 } from '../../src/testing/index.js';
import type { RequestDecider } from '../../src/testing/index.js';
import { ROUND_TRIPS_MS, harnessBound, sessionBound } from '../support/bounds.js';
import { sessionsWatching } from '../support/server-watches.js';
import { JsonLineProcess } from '../support/json-line-process.js';
import { eventually } from '../support/wait.js';
import { launchBrowser } from './helpers/browser.js';
import type { CliRun } from './helpers/cli.js';
import { startCli } from './helpers/cli.js';

/** The little of the DOM the tests read inside the page (they compile without the DOM's types). */
interface PageDom {
  document: { scrollingElement: { scrollWidth: number }; body: unknown; documentElement: unknown; querySelector(selector: string): unknown };
  getComputedStyle(element: unknown, pseudo?: string): { backgroundColor: string; color: string; content: string };
}

const SESSION_TIMEOUT_MS = 4000;
const KAZOO_SEMAPHORE = fileURLToPath(new URL('./fixtures/kazoo_semaphore.py', import.meta.url));
/** Every run takes the README's picture; into the test's temporary directory unless ZKLOCK_UI_SCREENSHOT=1 asks for it to be remade. */
const TEMP = mkdtempSync(join(tmpdir(), 'zklock-ui-'));
/** Where the pictures of each feature go: the temporary directory, or ZKLOCK_UI_SHOTS to keep them for a look. */
const SHOTS = process.env.ZKLOCK_UI_SHOTS ?? TEMP;
const SCREENSHOT = process.env.ZKLOCK_UI_SCREENSHOT === '1' ? new URL('../../docs/ui/zklock-ui.png', import.meta.url) : pathToFileURL(join(TEMP, 'zklock-ui.png'));

describe('zklock ui in a real browser', () => {
  let server: ZooKeeperServer;
  let admin: ZooKeeperClient;
  let browser: Browser;
  const clients: ZooKeeperClient[] = [];
  const runs: CliRun[] = [];
  const proxies: FaultProxy[] = [];

  before(async () => {
    server = await ZooKeeperServer.start();
    admin = await ZooKeeperClient.connect(server.connectString);
    browser = await launchBrowser();
  });

  after(async () => {
    for (const run of runs) run.child.kill('SIGKILL');
    await browser?.close();
    for (const p of proxies) await p.close();
    for (const client of clients) await client.close();
    await admin?.close();
    await server?.stop();
    rmSync(TEMP, { recursive: true, force: true });
  });

  /** A proxy between a ui and the server, for faults on the ui's connection only; closed after the tests. */
  async function proxy(onRequest?: RequestDecider): Promise<FaultProxy> {
    const p = await FaultProxy.start({ targetPort: server.port, ...(onRequest ? { onRequest } : {}) });
    proxies.push(p);
    return p;
  }

  /** The status line's words. */
  async function statusLine(page: Page): Promise<string> {
    return (await page.locator('#connection').textContent()) ?? '';
  }

  async function client(): Promise<ZooKeeperClient> {
    const c = await ZooKeeperClient.connect(server.connectString);
    clients.push(c);
    return c;
  }

  /** Starts `zklock ui` and answers the address it printed (with its ?token=). */
  async function startUi(root: string, ...flags: string[]): Promise<{ run: CliRun; url: string }> {
    const run = startCli(['ui', '--root', root, '--session-timeout', `${SESSION_TIMEOUT_MS}ms`, ...flags], { ZOOKEEPER_CONNECT: server.connectString });
    runs.push(run);
    const printed = /http:\/\/\S+\/\?token=[0-9a-f]+/;
    await eventually(() => printed.test(run.stdout()) || run.child.exitCode !== null, ROUND_TRIPS_MS, 'zklock ui printed its address');
    const url = printed.exec(run.stdout())?.[0];
    assert.ok(url, `no address printed; stderr: ${run.stderr()}`);
    return { run, url };
  }

  async function open(url: string, viewport = { width: 1280, height: 800 }): Promise<Page> {
    const page = await browser.newPage({ viewport });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error' && !/EventSource/.test(message.text())) errors.push(message.text());
    });
    await page.goto(url);
    await page.locator('#connection[data-state="connected"]').waitFor({ timeout: ROUND_TRIPS_MS });
    Object.assign(page, { scriptErrors: errors });
    return page;
  }

  /** The cookie the printed address gives, as a browser would keep it, for requests made outside the page. */
  async function signIn(url: string): Promise<string> {
    const res = await fetch(url, { redirect: 'manual' });
    assert.equal(res.status, 303);
    assert.match(res.headers.get('set-cookie') ?? '', /HttpOnly; SameSite=Strict/);
    return (res.headers.get('set-cookie') ?? '').split(';')[0]!;
  }

  /** The owners shown for a lock, holders first, as the page lists them. */
  function rows(page: Page, lock: string, role: 'holder' | 'waiter'): Promise<string[]> {
    return page.locator(`section[data-path="${lock}"] tr.${role} td.owner`).allTextContents();
  }

  async function shows(page: Page, lock: string, holders: string[], waiters: string[], what: string): Promise<void> {
    let seen: unknown;
    await eventually(
      async () => {
        seen = [await rows(page, lock, 'holder'), await rows(page, lock, 'waiter')];
        return JSON.stringify(seen) === JSON.stringify([holders, waiters]);
      },
      ROUND_TRIPS_MS,
      `${what} (last seen ${JSON.stringify(seen)})`,
    ).catch((error: Error) => assert.fail(error.message));
  }

  it('shows every kind of lock with holders and waiters in order, and follows releases and new waiters live', async () => {
    const alpha = await new Mutex(await client(), '/ui/live/backup', { ownerId: 'alpha' }).acquire();
    const waiting: Promise<Lease>[] = [];
    for (const id of ['beta', 'gamma']) {
      const c = await client();
      waiting.push(new Mutex(c, '/ui/live/backup', { ownerId: id }).acquire());
      // One at a time, so the queue order is known.
      await eventually(async () => (await admin.getChildren('/ui/live/backup')).children.length === waiting.length + 1);
    }
    const reader = await new ReadWriteLock(await client(), '/ui/live/config', { ownerId: 'reader-1' }).readLock.acquire();
    const writer = new ReadWriteLock(await client(), '/ui/live/config', { ownerId: 'writer-1' }).writeLock.acquire();
    await eventually(async () => (await admin.getChildren('/ui/live/config')).children.length === 2);
    const permit = await new Semaphore(await client(), '/ui/live/encoders', 1, { ownerId: 'encoder-1' }).acquire();

    const { url } = await startUi('/ui/live');
    const page = await open(url);
    await shows(page, '/ui/live/backup', ['alpha'], ['beta', 'gamma'], 'the mutex holder and its queue');
    await shows(page, '/ui/live/config', ['reader-1'], ['writer-1'], 'the read/write lock');
    await shows(page, '/ui/live/encoders', ['encoder-1'], [], 'the semaphore');
    assert.equal(await page.locator('section[data-path="/ui/live/config"] .badge').first().textContent(), 'read/write');
    // Each contender's side, as status's KIND column says it.
    assert.deepEqual(await page.locator('section[data-path="/ui/live/config"] td.kind').allTextContents(), ['shared', 'exclusive']);
    assert.equal(await page.locator('section[data-path="/ui/live/encoders"] .badge').first().textContent(), 'semaphore');
    // A waiter's czxid becomes a fencing token only if it gets the lock: no token is shown for it.
    const tokenCells = (lock: string, role: string): Promise<string[]> => page.locator(`section[data-path="${lock}"] tr.${role} td[data-label="Fencing token"]`).allTextContents();
    for (const lock of ['/ui/live/backup', '/ui/live/config', '/ui/live/encoders']) assert.match((await tokenCells(lock, 'holder')).join(), /^\d+$/, `${lock}'s holder has its token`);
    assert.deepEqual(await tokenCells('/ui/live/backup', 'waiter'), ['—', '—']);
    assert.deepEqual(await tokenCells('/ui/live/config', 'waiter'), ['—']);
    assert.match((await page.locator('#identity').textContent()) ?? '', new RegExp(server.connectString.replace(/\./g, '\\.')));
    assert.equal(await page.locator('button[data-action]').count(), 0, 'no admin buttons without --allow-admin');

    await alpha.release();
    await shows(page, '/ui/live/backup', ['beta'], ['gamma'], 'the handoff to beta');
    const delta = new Mutex(await client(), '/ui/live/backup', { ownerId: 'delta' }).acquire();
    await shows(page, '/ui/live/backup', ['beta'], ['gamma', 'delta'], 'a new waiter at the end of the queue');
    assert.ok((await page.locator('section[data-path="/ui/live/backup"] .timeline rect.span').count()) >= 2, 'the timeline shows alpha\'s and beta\'s holds');

    mkdirSync(new URL('.', SCREENSHOT), { recursive: true });
    await page.screenshot({ path: fileURLToPath(SCREENSHOT), fullPage: false });
    assert.deepEqual((page as Page & { scriptErrors: string[] }).scriptErrors, []);

    // A refusal without --allow-admin, whatever the page sends.
    const refused = await page.evaluate(async () => (await fetch('/api/release', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"node":"/ui/live/backup"}' })).status);
    assert.equal(refused, 403);

    // Each waiter gets the lock once the one before it lets go: released in queue order.
    for (const next of [...waiting, delta]) await (await next).release();
    await reader.release();
    await (await writer).release();
    await permit.release();
    await page.close();
  });

  it('says when its root does not exist; then shows a kazoo semaphore made under it with its holders and waiter; a missing chroot is CHROOT_MISSING', async () => {
    const { url } = await startUi('/ui/not-yet');
    const page = await open(url);
    await eventually(async () => /\/ui\/not-yet does not exist/.test(await statusLine(page)), ROUND_TRIPS_MS, 'the page says the root is missing');
    const peer = new JsonLineProcess('kazoo semaphore', '/usr/bin/python3', [KAZOO_SEMAPHORE, server.connectString, '/ui/not-yet/kz']);
    try {
      await peer.line((l) => l.held === 2);
      await eventually(async () => (await admin.getChildren('/ui/not-yet/kz-__lock__')).children.length === 1, ROUND_TRIPS_MS, 'the waiter queued');
      // kazoo's Semaphore hands its identifier's bytes to its Lock, which writes their repr.
      await shows(page, '/ui/not-yet/kz', ['kazoo-0', 'kazoo-1'], ["b'kazoo-2'"], 'the kazoo semaphore\'s holders and waiter');
      assert.equal(await page.locator('section[data-path="/ui/not-yet/kz-__lock__"]').count(), 0, 'its waiters\' lock is a part of it');
      assert.equal(await page.locator('section[data-path="/ui/not-yet/kz"] .badge').first().textContent(), 'semaphore');
      assert.doesNotMatch(await statusLine(page), /does not exist/);
    } finally {
      peer.send('stop');
      await peer.exited;
    }
    await page.close();
    const chroot = startCli(['ui', '--connect', `${server.connectString}/no-such-chroot`]);
    assert.equal(await chroot.exited(ROUND_TRIPS_MS), 1, chroot.stderr());
    assert.match(chroot.stderr(), /CHROOT_MISSING: the chroot \/no-such-chroot/);
  });

  it('shows a holder that waited with its hold bounded, never its wait as a hold, in its age and its timeline', async () => {
    const first = await new Mutex(await client(), '/ui/held/lock', { ownerId: 'first' }).acquire();
    const waiting = new Mutex(await client(), '/ui/held/lock', { ownerId: 'second' }).acquire();
    await eventually(async () => (await admin.getChildren('/ui/held/lock')).children.length === 2);
    // Time passing is what is measured: the second one's wait.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    await first.release();
    const second = await waiting;
    const { url } = await startUi('/ui/held');
    const page = await open(url);
    await shows(page, '/ui/held/lock', ['second'], [], 'the holder that waited');
    // Its queue's last change (first's deletion) is dated by no node: only its time in the queue bounds its hold.
    const cell = (await page.locator('section[data-path="/ui/held/lock"] tr.holder td.age').textContent()) ?? '';
    assert.match(cell, /^≤ /, `a bound, not the wait as a hold: ${cell}`);
    assert.equal(await page.locator('section[data-path="/ui/held/lock"] .timeline rect.span').count(), 1);
    await second.release();
    await page.close();
  });

  it('shows owner data as text: markup in it never runs', async () => {
    const c = await client();
    await c.ensurePath('/ui/xss/lock');
    await c.create('/ui/xss/lock/lock-', '<script>window.__pwned=1</script>', { mode: 'EPHEMERAL_SEQUENTIAL' });
    await c.create('/ui/xss/lock/lock-', '<img src=x onerror="window.__pwned=2">', { mode: 'EPHEMERAL_SEQUENTIAL' });
    const { url } = await startUi('/ui/xss');
    const page = await open(url);
    await shows(page, '/ui/xss/lock', ['<script>window.__pwned=1</script>'], ['<img src=x onerror="window.__pwned=2">'], 'the owners as literal text');
    assert.equal(await page.evaluate('typeof window.__pwned'), 'undefined', 'no script of the owner data ran');
    assert.equal(await page.locator('section[data-path="/ui/xss/lock"] img, section[data-path="/ui/xss/lock"] script').count(), 0);
    await page.close();
  });

  it('admin: refuses other origins, hosts and missing tokens; a confirmed force release deletes the node and is logged', async () => {
    const holder = await client();
    const lease = await new Mutex(holder, '/ui/admin/job', { ownerId: 'stuck-worker' }).acquire();
    const nodePath = (await admin.getChildren('/ui/admin/job')).children.map((n) => `/ui/admin/job/${n}`)[0]!;
    const { run, url } = await startUi('/ui/admin', '--allow-admin');
    const page = await open(url);
    await shows(page, '/ui/admin/job', ['stuck-worker'], [], 'the holder');

    const cookie = await signIn(url);
    const origin = new URL(url).origin;
    const post = (headers: Record<string, string>, body: unknown = { node: nodePath }, action = 'release'): Promise<number> =>
      fetch(new URL(`/api/${action}`, url), { method: 'POST', headers: { 'Content-Type': 'application/json', Cookie: cookie, ...headers }, body: JSON.stringify(body) }).then((r) => r.status);
    const token = (await page.locator('meta[name="zklock-admin-token"]').getAttribute('content')) ?? '';
    assert.equal(await post({ 'X-Zklock-Token': token, Origin: 'http://evil.example' }), 403, 'another site\'s origin');
    assert.equal(await post({ Origin: origin }), 403, 'no token');
    // Change the last hex digit to another one: always '0' would be the same token one time in sixteen.
    const wrong = `${token.slice(0, -1)}${token.endsWith('0') ? '1' : '0'}`;
    assert.notEqual(wrong, token);
    assert.equal(await post({ Origin: origin, 'X-Zklock-Token': wrong }), 403, 'a wrong token');
    assert.equal(await post({ Origin: origin, 'X-Zklock-Token': token, Cookie: 'zklock-ui-1=nope' }), 401, 'no page cookie');
    assert.equal(await post({ Origin: origin, 'X-Zklock-Token': token }, { node: `${nodePath}x\n2000-01-01 admin forged` }), 404, 'a node not on show');
    assert.equal(await post({ Origin: origin, 'X-Zklock-Token': token }, { node: 'x'.repeat(5000) }), 413, 'an oversized body');
    const port = new URL(url).port;
    // fetch will not send a Host of our choosing; node:http does, as a browser does for a rebound name.
    const rebound = await new Promise<number | undefined>((resolve, reject) => {
      get(url, { headers: { Host: `evil.example:${port}` } }, (res) => resolve(res.resume().statusCode)).on('error', reject);
    });
    assert.equal(rebound, 421, 'a Host that is not ours (DNS rebinding)');
    assert.ok(await admin.exists(nodePath), 'nothing deleted by refused requests');
    await eventually(() => (run.stdout().match(/ admin force release of .* asked from /g) ?? []).length === 6, ROUND_TRIPS_MS, 'every refused request logged');
    assert.ok(!/^2000-01-01/m.test(run.stdout()), 'node text cannot forge a log line');

    // Escape, then Cancel: nothing sent, nothing deleted, and focus back on the button.
    const button = page.locator(`tr[data-node="${nodePath}"] button[data-action="release"]`);
    for (const dismiss of [() => page.keyboard.press('Escape'), () => page.locator('#confirm button[value="cancel"]').click()]) {
      await button.click();
      await page.locator('#confirm[open]').waitFor({ timeout: ROUND_TRIPS_MS });
      await dismiss();
      await page.locator('#confirm[open]').waitFor({ state: 'detached', timeout: ROUND_TRIPS_MS });
    }
    assert.ok(await admin.exists(nodePath), 'nothing deleted by a dismissed dialog');
    assert.equal((run.stdout().match(/ admin force release of /g) ?? []).length, 6, 'and nothing asked of the server');

    await button.focus();
    await page.keyboard.press('Enter');
    await page.locator('#confirm[open]').waitFor({ timeout: ROUND_TRIPS_MS });
    await page.locator('#confirm-ok').click();
    await eventually(async () => (await admin.exists(nodePath)) === null, ROUND_TRIPS_MS, 'the node deleted');
    await eventually(() => run.stdout().includes(`admin force release of ${JSON.stringify(nodePath)} asked from`) && /: 200 deleted /.test(run.stdout()), ROUND_TRIPS_MS, 'the action logged');
    await shows(page, '/ui/admin/job', [], [], 'the lock free');
    assert.equal(await page.locator('section[data-path="/ui/admin/job"] .timeline rect.span.forced').count(), 1, 'the timeline marks the hold forced');
    await eventually(() => !lease.held, ROUND_TRIPS_MS, 'the holder notices');
    await page.close();
  });

  it('admin: a confirmed revoke asks the holder to let go; a semaphore\'s holder is never asked', async () => {
    const lease = await new Mutex(await client(), '/ui/revoke/job', { ownerId: 'polite', revocable: true }).acquire();
    const permit = await new Semaphore(await client(), '/ui/revoke/pool', 2, { ownerId: 'permit' }).acquire();
    const { run, url } = await startUi('/ui/revoke', '--allow-admin');
    const page = await open(url);
    await shows(page, '/ui/revoke/job', ['polite'], [], 'the holder');
    await shows(page, '/ui/revoke/pool', ['permit'], [], 'the semaphore holder');
    assert.equal(await page.locator('section[data-path="/ui/revoke/pool"] button[data-action="revoke"]').count(), 0, 'no revoke button for a semaphore');

    const permitNode = (await page.locator('section[data-path="/ui/revoke/pool"] tr.holder').getAttribute('data-node')) ?? '';
    const token = (await page.locator('meta[name="zklock-admin-token"]').getAttribute('content')) ?? '';
    const before = (await admin.getData(permitNode)).stat.version;
    const refused = await fetch(new URL('/api/revoke', url), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Cookie: await signIn(url), Origin: new URL(url).origin, 'X-Zklock-Token': token },
      body: JSON.stringify({ node: permitNode }),
    });
    assert.equal(refused.status, 409, 'the server refuses what the page does not offer');
    assert.equal((await admin.getData(permitNode)).stat.version, before, 'the permit node untouched');

    await page.locator('section[data-path="/ui/revoke/job"] button[data-action="revoke"]').click();
    await page.locator('#confirm[open]').waitFor({ timeout: ROUND_TRIPS_MS });
    await page.locator('#confirm-ok').click();
    await eventually(() => lease.revocationRequested.aborted, ROUND_TRIPS_MS, 'the holder told to let go');
    await eventually(() => / admin revocation request of "\/ui\/revoke\/job\/.*: 200 /.test(run.stdout()), ROUND_TRIPS_MS, 'the request logged');
    await lease.release();
    await permit.release();
    await page.close();
  });

  it('opens only through the printed address: no page, events or token without its secret', async () => {
    const { url } = await startUi('/ui/secret', '--allow-admin');
    const bare = new URL('/', url);
    assert.equal((await fetch(bare)).status, 401, 'the page without the secret');
    assert.equal((await fetch(new URL('/events', url))).status, 401, 'the events without the secret');
    assert.equal((await fetch(new URL('/?token=0123', url), { redirect: 'manual' })).status, 401, 'a wrong secret');
    const page = await open(url);
    assert.equal(new URL(page.url()).search, '', 'the secret is off the address bar once exchanged');
    assert.equal(await page.evaluate(() => (globalThis as unknown as { document: { cookie: string } }).document.cookie), '', 'the cookie is out of scripts\' reach');
    await page.close();
  });

  it('answers a request target that URL refuses with 400 and keeps serving', async () => {
    const { run, url } = await startUi('/ui/target');
    const { hostname, port, host } = new URL(url);
    // Node's HTTP parser accepts this line; `new URL` throws on it.
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => socket.end(`GET http://[ HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`));
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    assert.match(answer, /^HTTP\/1\.1 400 /, answer.slice(0, 80));
    assert.equal(run.child.exitCode, null, 'zklock ui still runs');
    assert.equal((await fetch(new URL('/', url))).status, 401, 'and still answers');
  });

  it('shows every other lock when a znode under the root is unreadable (its ACL), and follows changes next to it', async () => {
    // The secret subtree lets anyone create and delete in it, but not list it.
    await admin.ensurePath('/ui/acl');
    await admin.create('/ui/acl/secret', '', { acl: [{ perms: Perms.CREATE | Perms.DELETE, id: { scheme: 'world', id: 'anyone' } }] });
    const holder = await new Mutex(await client(), '/ui/acl/open', { ownerId: 'visible' }).acquire();
    const { url } = await startUi('/ui/acl');
    const page = await open(url);
    await shows(page, '/ui/acl/open', ['visible'], [], 'the readable lock');
    await page.locator('#connection', { hasText: '1 unreadable' }).waitFor({ timeout: ROUND_TRIPS_MS });
    // One batch of changes, one of them where we may not read: the other still shows.
    const contender = '_c_00000000-0000-4000-8000-000000000001-lock-';
    await admin.multi([
      { op: 'create', path: `/ui/acl/secret/${contender}`, mode: 'EPHEMERAL_SEQUENTIAL' },
      { op: 'create', path: `/ui/acl/open/${contender}`, data: 'next', mode: 'EPHEMERAL_SEQUENTIAL' },
    ]);
    await shows(page, '/ui/acl/open', ['visible'], ['next'], 'a waiter that came with a change next to the unreadable node');
    await holder.release();
    await page.close();
  });

  it('walks a folder named locks at the root (the README\'s layout): its locks show, and a new one appears live', async () => {
    // A chroot, so the ui's root is `/` and the folder is `/locks`, as in the README, whatever other tests made.
    await admin.ensurePath('/ui-chroot');
    const chrooted = `${server.connectString}/ui-chroot`;
    const c = await ZooKeeperClient.connect(chrooted);
    clients.push(c);
    const held = await new Mutex(c, '/locks/x', { ownerId: 'x-holder' }).acquire();
    const { url } = await startUi('/', '--connect', chrooted);
    const page = await open(url);
    await shows(page, '/locks/x', ['x-holder'], [], 'the mutex under /locks');
    assert.equal(await page.locator('section[data-path="/"]').count(), 0, 'the root is no semaphore');
    const later = await new Mutex(c, '/locks/y', { ownerId: 'y-holder' }).acquire();
    await shows(page, '/locks/y', ['y-holder'], [], 'a mutex made under /locks after the page opened');
    // A simple lock is one node, made in /locks itself: the change is at /locks/z, not below it.
    const simple = await new SimpleLock(c, '/locks/z', { ownerId: 'z-holder' }).acquire();
    await shows(page, '/locks/z', ['z-holder'], [], 'a simple lock made under /locks after the page opened');
    assert.equal(await page.locator('section[data-path="/"]').count(), 0, 'still no semaphore at the root');
    await simple.release();
    await later.release();
    await held.release();
    await page.close();
  });

  it('renders 1,000 locks with 10 waiters each and reflects a change in one of them', async (t) => {
    const LOCKS = 1000;
    const WAITERS = 10;
    const writers = await Promise.all([client(), client(), client(), client()]);
    const name = (i: number, n: number): string => `_c_00000000-0000-4000-8000-${String(i).padStart(12, '0')}-lock-${String(n).padStart(10, '0')}`;
    // Plain nodes with the layouts' names, not real acquisitions: what the page reads is the same.
    const ops = Array.from({ length: LOCKS }, (_, i) => [
      { op: 'create' as const, path: `/ui/scale/lock-${String(i).padStart(4, '0')}` },
      ...Array.from({ length: WAITERS + 1 }, (_, n) => ({ op: 'create' as const, path: `/ui/scale/lock-${String(i).padStart(4, '0')}/${name(i, n)}`, data: Buffer.from(JSON.stringify({ id: `worker-${i}-${n}`, host: 'db-7', pid: 4000 + n })) })),
    ]);
    await admin.ensurePath('/ui/scale');
    await Promise.all(writers.map(async (w, k) => {
      for (let i = k; i < LOCKS; i += writers.length) await w.multi(ops[i]!);
    }));

    const { url } = await startUi('/ui/scale');
    const started = Date.now();
    const page = await open(url);
    await page.locator('section.lock').nth(LOCKS - 1).waitFor({ timeout: 3 * ROUND_TRIPS_MS });
    const rendered = Date.now() - started;
    assert.equal(await page.locator('section.lock').count(), LOCKS);
    assert.equal(await page.locator('tr.waiter').count(), LOCKS * WAITERS);

    const lock = '/ui/scale/lock-0500';
    await shows(page, lock, ['worker-500-0'], Array.from({ length: WAITERS }, (_, n) => `worker-500-${n + 1}`), 'the holder and the queue of one lock among many');
    const changed = Date.now();
    await admin.delete(`${lock}/${name(500, 0)}`);
    // Checked in the page at every frame, so the time measured is the page's, not a poll interval's
    // (a function: the page's Content-Security-Policy refuses a string to evaluate).
    type Dom = { document: { querySelector(selector: string): { textContent: string | null } | null } };
    const holderShown = (path: string): boolean => (globalThis as unknown as Dom).document.querySelector(`section[data-path="${path}"] tr.holder td.owner`)?.textContent === 'worker-500-1';
    await page.waitForFunction(holderShown, lock, { polling: 'raf', timeout: ROUND_TRIPS_MS });
    // Measured, not asserted (no speed claims in tests): the README's "under a second" is read off these.
    t.diagnostic(`scale: ${LOCKS} locks x ${WAITERS} waiters rendered ${rendered} ms after load; a handoff showed ${Date.now() - changed} ms after the delete`);
    await page.close();
  });

  it('shows ZooKeeper going away, and recovers with the watch set again when it returns', async () => {
    await admin.ensurePath('/ui/outage');
    const { url } = await startUi('/ui/outage');
    const page = await open(url);
    // The server's own list of watches, not the page's word: the persistent watch is in place before the outage.
    await eventually(async () => /^\t\/ui\/outage$/m.test(await server.fourLetterWord('wchc')), ROUND_TRIPS_MS, 'the watch on the root set');
    await page.locator('#connection[data-mode="watch"]').waitFor({ timeout: ROUND_TRIPS_MS });
    await server.stop();
    await page.locator('#connection[data-state="disconnected"], #connection[data-state="expired"]').waitFor({ timeout: sessionBound(SESSION_TIMEOUT_MS) });
    await server.start();
    await page.locator('#connection[data-state="connected"]').waitFor({ timeout: harnessBound(1) });
    // A change after the return shows: the watch (or, after an expiry, a new one) is in place.
    await eventually(async () => /^\t\/ui\/outage$/m.test(await server.fourLetterWord('wchc')), harnessBound(1), 'the watch set again on the returned server');
    const lease = await new Mutex(await client(), '/ui/outage/after', { ownerId: 'back-again' }).acquire();
    await shows(page, '/ui/outage/after', ['back-again'], [], 'a lock taken after the outage');
    await lease.release();
    await page.close();
  });
  it('after an outage longer than its session: a new session with one new watch, the tree read again, said on the page, and every change shown', async () => {
    const EXPIRY_SESSION_MS = 2000;
    const root = '/ui/expiry';
    const early = await new Mutex(await client(), `${root}/job`, { ownerId: 'early' }).acquire();
    const cut = await proxy();
    const { url } = await startUi(root, '--connect', cut.connectString, '--session-timeout', `${EXPIRY_SESSION_MS}ms`);
    const page = await open(url);
    await shows(page, `${root}/job`, ['early'], [], 'the holder before the outage');
    await page.locator('#connection[data-mode="watch"]').waitFor({ timeout: ROUND_TRIPS_MS });
    await eventually(async () => (await sessionsWatching(server, root)).length === 1, ROUND_TRIPS_MS, 'the ui\'s watch on the root');
    const [first] = await sessionsWatching(server, root);

    // A partition (no FIN, no RST) longer than the session: the server expires it, the ui's client concludes it has.
    cut.blackhole();
    await eventually(async () => !(await server.fourLetterWord('cons')).includes(`sid=${first}`) && (await sessionsWatching(server, root)).length === 0, sessionBound(EXPIRY_SESSION_MS), 'the server expired the ui\'s session');
    await page.locator('#connection[data-state="expired"]').waitFor({ timeout: sessionBound(EXPIRY_SESSION_MS) });
    assert.match(await statusLine(page), /^Session expired at .*: starting a new one; showing the last known state/);
    // Changes while the ui cannot see: a handoff, a waiter, a new lock.
    const during = new Mutex(await client(), `${root}/job`, { ownerId: 'during' }).acquire();
    await eventually(async () => (await admin.getChildren(`${root}/job`)).children.length === 2);
    await early.release();
    const held = await during;
    const queued = new Mutex(await client(), `${root}/job`, { ownerId: 'queued' }).acquire();
    const other = await new Mutex(await client(), `${root}/made-during`, { ownerId: 'other' }).acquire();
    await eventually(async () => (await admin.getChildren(`${root}/job`)).children.length === 2);
    await shows(page, `${root}/job`, ['early'], [], 'the last known state while away');

    // Every status the page shows from here on, with the holder it shows beside it at that moment.
    await page.evaluate((lock) => {
      type El = { dataset: Record<string, string>; textContent: string | null };
      const doc = (globalThis as unknown as { document: { getElementById(id: string): El; querySelector(s: string): El | null } }).document;
      const line = doc.getElementById('connection');
      const seen: string[] = [];
      Object.assign(globalThis, { seenStatuses: seen });
      new (globalThis as unknown as { MutationObserver: new (f: () => void) => { observe(n: El, o: object): void } }).MutationObserver(() => {
        const entry = `${line.dataset.state}/${line.dataset.mode}/${doc.querySelector(`section[data-path="${lock}"] tr.holder td.owner`)?.textContent ?? ''}`;
        if (seen.at(-1) !== entry) seen.push(entry);
      }).observe(line, { attributes: true });
    }, `${root}/job`);
    cut.passThrough();
    await page.locator('#connection[data-state="connected"][data-mode="watch"]').waitFor({ timeout: sessionBound(EXPIRY_SESSION_MS) });
    // Not 'live' on the new session before its watch is set and the tree read again: until then it says it is reading.
    const seen = await page.evaluate(() => (globalThis as unknown as { seenStatuses: string[] }).seenStatuses);
    // Connected ones up to the first live one, each once (a reconnect on the way may show one twice).
    const connected = seen.slice(0, seen.findIndex((entry) => entry.startsWith('connected/watch/')) + 1).filter((entry) => entry.startsWith('connected/'));
    assert.deepEqual([...new Set(connected)], ['connected/starting/early', 'connected/watch/during'], `statuses shown: ${seen.join(', ')}`);
    assert.equal(await statusLine(page), 'Connected · live (one persistent recursive watch)');
    await shows(page, `${root}/job`, ['during'], ['queued'], 'the handoff and the waiter made during the outage');
    await shows(page, `${root}/made-during`, ['other'], [], 'the lock made during the outage');
    // One watch on the root, on a session that is not the expired one (the server's word).
    await eventually(async () => (await sessionsWatching(server, root)).length === 1, ROUND_TRIPS_MS, 'the new session\'s watch');
    const [second] = await sessionsWatching(server, root);
    assert.notEqual(second, first, 'the watch is on a new session');
    const after = await new Mutex(await client(), `${root}/made-after`, { ownerId: 'after' }).acquire();
    await shows(page, `${root}/made-after`, ['after'], [], 'a lock made after the outage');
    await held.release();
    await shows(page, `${root}/job`, ['queued'], [], 'a handoff after the outage');

    // The page against an independent read of the server: the same locks, the same contender nodes.
    const truth = new Map<string, string[]>();
    for (const lock of (await admin.getChildren(root)).children) {
      truth.set(`${root}/${lock}`, (await admin.getChildren(`${root}/${lock}`)).children.map((n) => `${root}/${lock}/${n}`).sort());
    }
    const shown = new Map<string, string[]>();
    for (const section of await page.locator(`section[data-path^="${root}/"]`).all()) {
      const path = (await section.getAttribute('data-path')) ?? '';
      shown.set(path, (await section.locator('tr[data-node]').evaluateAll((rows) => rows.map((r) => (r as unknown as { dataset: { node: string } }).dataset.node))).sort());
    }
    assert.deepEqual([...shown].sort(), [...truth].sort());
    assert.deepEqual(await sessionsWatching(server, root), [second], 'still one watch, on one session');
    await Promise.all([(await queued).release(), other.release(), after.release()]);
    await page.close();
  });

  it('sets its watch when the connection drops before the first addWatch is answered', async () => {
    const ADD_WATCH = 106;
    const root = '/ui/race';
    await admin.ensurePath(root);
    let cutAt: number | undefined;
    // The first addWatch never reaches the server: its connection is reset with the request in flight.
    const cut = await proxy(({ opcode, connection }) => {
      if (opcode !== ADD_WATCH || cutAt !== undefined) return 'forward';
      cutAt = connection.id;
      return 'reset';
    });
    const { url } = await startUi(root, '--connect', cut.connectString);
    const page = await open(url);
    await eventually(() => cutAt !== undefined, ROUND_TRIPS_MS, 'the first addWatch cut');
    await page.locator('#connection[data-state="connected"][data-mode="watch"]').waitFor({ timeout: ROUND_TRIPS_MS });
    await eventually(() => cut.connections.length > 0 && cut.connections.every((c) => c.id !== cutAt), ROUND_TRIPS_MS, 'the ui on a new connection');
    await eventually(async () => (await sessionsWatching(server, root)).length === 1, ROUND_TRIPS_MS, 'the watch set on the server');
    // The failed first read's error is gone with the read that succeeded.
    assert.equal(await statusLine(page), 'Connected · live (one persistent recursive watch)');
    const lease = await new Mutex(await client(), `${root}/after`, { ownerId: 'after-reconnect' }).acquire();
    await shows(page, `${root}/after`, ['after-reconnect'], [], 'a lock taken after the reconnect');
    await lease.release();
    await page.close();
  });

  it('polls a server without persistent watches (a 3.5 server played by the proxy) and shows changes', async () => {
    const root = '/ui/poll';
    const held = await new Mutex(await client(), `${root}/first`, { ownerId: 'before' }).acquire();
    // ZooKeeper 3.5 knows none of 3.6's operations (multiRead, addWatch, ...): it answers UNIMPLEMENTED and closes the connection.
    const old = await proxy(asZooKeeper35());
    const { url } = await startUi(root, '--connect', old.connectString);
    const page = await open(url);
    await shows(page, `${root}/first`, ['before'], [], 'the lock read at start');
    await page.locator('#connection[data-state="connected"][data-mode="poll"]').waitFor({ timeout: ROUND_TRIPS_MS });
    assert.match(await statusLine(page), /^Connected · polling every second \(this server has no persistent watches\)$/);
    const lease = await new Mutex(await client(), `${root}/later`, { ownerId: 'polled' }).acquire();
    await held.release();
    // A poll a second: a change shows within a round of reads, whatever the load.
    await shows(page, `${root}/later`, ['polled'], [], 'a lock taken while polling');
    await shows(page, `${root}/first`, [], [], 'a release seen while polling');
    assert.deepEqual(await sessionsWatching(server, root), [], 'no watch on the server');
    // A page opened now is told the same from the start.
    const late = await open(url);
    await late.locator('#connection[data-state="connected"][data-mode="poll"]').waitFor({ timeout: ROUND_TRIPS_MS });
    await shows(late, `${root}/later`, ['polled'], [], 'the lock, on a page opened while polling');
    await late.close();
    await lease.release();
    await page.close();
  });
  /** Each feature's picture, into the test's temporary directory (never the repository), to be looked at. */
  async function picture(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  }

  /** The timeline's holder labels of a lock, and its tick labels. */
  function timelineTexts(page: Page, lock: string, what: 'holder' | 'tick-label'): Promise<string[]> {
    return page.locator(`section[data-path="${lock}"] .timeline text.${what}`).allTextContents();
  }

  it('names the holder on each timeline segment and puts ticks on its time axis', async () => {
    const root = '/ui/ops';
    const first = await new Mutex(await client(), `${root}/a-job`, { ownerId: 'ann' }).acquire();
    const { url } = await startUi(root);
    const page = await open(url);
    await shows(page, `${root}/a-job`, ['ann'], [], 'the first holder');
    // ann's segment grows with the clock (redrawn every few seconds) until her name fits in it.
    await eventually(async () => (await timelineTexts(page, `${root}/a-job`, 'holder')).includes('ann'), ROUND_TRIPS_MS, 'ann named on her segment');
    await first.release();
    const second = await new Mutex(await client(), `${root}/a-job`, { ownerId: 'bob' }).acquire();
    await shows(page, `${root}/a-job`, ['bob'], [], 'the next holder');
    await eventually(async () => (await timelineTexts(page, `${root}/a-job`, 'holder')).includes('bob'), ROUND_TRIPS_MS, 'bob named on his segment');
    // One label per segment, in the segments' order, each the holder's name (cut with … only where it does not fit).
    const segments = page.locator(`section[data-path="${root}/a-job"] .timeline rect.span`);
    assert.equal(await segments.count(), 2);
    assert.deepEqual(await timelineTexts(page, `${root}/a-job`, 'holder'), ['ann', 'bob']);
    assert.match((await segments.nth(0).locator('title').textContent()) ?? '', /^ann \(token \d+\) released after/);

    // Ticks back from now: at least two, evenly spaced, labelled "-<age>" in growing steps, and "now" at the end.
    const ticks = await timelineTexts(page, `${root}/a-job`, 'tick-label');
    assert.ok(ticks.length >= 2, `ticks: ${JSON.stringify(ticks)}`);
    const agoMs = ticks.map((label) => {
      const m = /^-(?:(\d+)m)?(?:(\d+)s)?$/.exec(label);
      assert.ok(m && (m[1] || m[2]), `tick label ${label}`);
      return (Number(m[1] ?? 0) * 60 + Number(m[2] ?? 0)) * 1000;
    });
    // The nearest first, each a step further back.
    const steps = agoMs.slice(1).map((ms, i) => ms - agoMs[i]!);
    assert.ok(steps.every((step) => step > 0 && step === agoMs[0]), `tick steps ${JSON.stringify(agoMs)}`);
    assert.ok(agoMs[agoMs.length - 1]! <= 5 * 60_000);
    assert.ok(await page.locator(`section[data-path="${root}/a-job"] .timeline text`, { hasText: /^now$/ }).count() === 1);
    await picture(page, 'timeline');
    assert.deepEqual((page as Page & { scriptErrors: string[] }).scriptErrors, []);
    await second.release();
    await page.close();
  });

  it('counts the locks its filter hides', async () => {
    const root = '/ui/filter';
    const leases = [
      await new Mutex(await client(), `${root}/a-job`, { ownerId: 'ann' }).acquire(),
      await new Mutex(await client(), `${root}/b-job`, { ownerId: 'cy' }).acquire(),
      await new Mutex(await client(), `${root}/c-backup`, { ownerId: 'dee' }).acquire(),
    ];
    const { url } = await startUi(root);
    const page = await open(url);
    await shows(page, `${root}/c-backup`, ['dee'], [], 'the last lock');
    // The filter hides two of three locks, and says so; cleared, it says nothing.
    const hidden = page.locator('#hidden');
    assert.equal(await hidden.textContent(), '');
    await page.locator('#filter').fill('backup');
    assert.equal(await hidden.textContent(), '2 of 3 locks hidden by the filter');
    assert.equal(await page.locator('section.lock:not([hidden])').count(), 1);
    await picture(page, 'filter');
    // A new lock the filter does not match is counted as it arrives.
    const late = await new Mutex(await client(), `${root}/d-job`, { ownerId: 'eve' }).acquire();
    await eventually(async () => (await hidden.textContent()) === '3 of 4 locks hidden by the filter', ROUND_TRIPS_MS, 'the count follows a new lock');
    await page.locator('#filter').fill('');
    assert.equal(await hidden.textContent(), '');
    assert.equal(await page.locator('section.lock:not([hidden])').count(), 4);
    assert.deepEqual((page as Page & { scriptErrors: string[] }).scriptErrors, []);
    await late.release();
    for (const lease of leases) await lease.release();
    await page.close();
  });

  it('fits a phone (420 px) without sideways scrolling', async () => {
    const root = '/ui/phone';
    const held = await new Mutex(await client(), `${root}/a-very-long-lock-name-for-a-nightly-database-backup-job`, { ownerId: 'backup-runner@db-primary-eu-west-1.example.internal' }).acquire();
    const waiter = new Mutex(await client(), `${root}/a-very-long-lock-name-for-a-nightly-database-backup-job`, { ownerId: 'second' }).acquire();
    await eventually(async () => (await admin.getChildren(`${root}/a-very-long-lock-name-for-a-nightly-database-backup-job`)).children.length === 2);
    const { url } = await startUi(root);
    const page = await open(url, { width: 420, height: 800 });
    await shows(page, `${root}/a-very-long-lock-name-for-a-nightly-database-backup-job`, ['backup-runner@db-primary-eu-west-1.example.internal'], ['second'], 'the lock at phone width');
    const width = await page.evaluate(() => (globalThis as unknown as PageDom).document.scrollingElement.scrollWidth);
    assert.ok(width <= 420, `the page is ${width} px wide at 420`);
    // Every cell of the table within the screen, each naming its column.
    const cells = await page.locator('section.lock td').evaluateAll((tds) =>
      tds.map((td) => ({ right: (td as unknown as { getBoundingClientRect(): { right: number } }).getBoundingClientRect().right, label: (globalThis as unknown as PageDom).getComputedStyle(td, '::before').content })),
    );
    assert.ok(cells.length >= 16);
    for (const cell of cells) assert.ok(cell.right <= 420, `a cell reaches ${cell.right} px`);
    assert.ok(cells.some((cell) => cell.label === '"Owner"'), 'cells name their column');
    await picture(page, 'phone');
    await held.release();
    await (await waiter).release();
    await page.close();
  });

  it('follows a dark colour scheme', async () => {
    const root = '/ui/dark';
    const held = await new Mutex(await client(), `${root}/job`, { ownerId: 'night-shift' }).acquire();
    const waiter = new Mutex(await client(), `${root}/job`, { ownerId: 'second' }).acquire();
    await eventually(async () => (await admin.getChildren(`${root}/job`)).children.length === 2);
    const { url } = await startUi(root);
    const page = await open(url);
    await shows(page, `${root}/job`, ['night-shift'], ['second'], 'the lock');
    // Light unless asked; dark when the system asks for it.
    const lightness = (): Promise<number> =>
      page.evaluate(() => {
        const inPage = globalThis as unknown as PageDom;
        // What shows behind the text: the body's background, or the root's through a transparent body.
        const [body, root] = [inPage.document.body, inPage.document.documentElement].map((e) => inPage.getComputedStyle(e).backgroundColor);
        const [r, g, b] = ((body === 'rgba(0, 0, 0, 0)' ? root : body)!.match(/\d+/g) ?? []).map(Number);
        return (0.2126 * r! + 0.7152 * g! + 0.0722 * b!) / 255;
      });
    await page.emulateMedia({ colorScheme: 'light' });
    assert.ok((await lightness()) > 0.9, 'a light page by default');
    await page.emulateMedia({ colorScheme: 'dark' });
    assert.ok((await lightness()) < 0.2, 'a dark body background');
    const text = await page.evaluate(() => {
      const inPage = globalThis as unknown as PageDom;
      return inPage.getComputedStyle(inPage.document.querySelector('section.lock td.owner')).color;
    });
    assert.notEqual(text, 'rgb(27, 31, 36)', 'and light text on it');
    await picture(page, 'dark');
    await page.setViewportSize({ width: 420, height: 800 });
    await picture(page, 'phone-dark');
    await held.release();
    await (await waiter).release();
    await page.close();
  });

  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    it(`says on stderr that ${signal} stopped it, and exits ${code}`, async () => {
      const { run } = await startUi('/ui/stop');
      run.child.kill(signal);
      assert.equal(await run.exited(ROUND_TRIPS_MS), code, run.stderr());
      assert.match(run.stderr(), new RegExp(`^zklock: ui interrupted by ${signal}; stopped serving \\S+\\n$`));
    });
  }

  it('keeps the history it has seen across a reload, even of a restarted zklock ui', async () => {
    const root = '/ui/reload';
    const first = await new Mutex(await client(), `${root}/job`, { ownerId: 'ann' }).acquire();
    const one = await startUi(root, '--port', '0');
    const page = await open(one.url);
    await shows(page, `${root}/job`, ['ann'], [], 'the first holder');
    await first.release();
    const second = await new Mutex(await client(), `${root}/job`, { ownerId: 'bob' }).acquire();
    await shows(page, `${root}/job`, ['bob'], [], 'the next holder');
    const spans = page.locator(`section[data-path="${root}/job"] .timeline rect.span`);
    assert.equal(await spans.count(), 2);
    const before = await spans.locator('title').allTextContents();

    // The same page reloaded, then the ui restarted on the same address (a new token): ann's hold is still drawn.
    await page.reload();
    await shows(page, `${root}/job`, ['bob'], [], 'the holder after a reload');
    assert.equal(await spans.count(), 2, 'both holds after a reload');
    const port = new URL(one.url).port;
    one.run.child.kill('SIGTERM');
    await once(one.run.child, 'exit');
    const two = await startUi(root, '--port', port);
    await page.goto(two.url);
    await page.locator('#connection[data-state="connected"]').waitFor({ timeout: ROUND_TRIPS_MS });
    await shows(page, `${root}/job`, ['bob'], [], 'the holder seen by the new ui');
    const after = await spans.locator('title').allTextContents();
    assert.equal(after.length, 2, `both holds after a restart: ${JSON.stringify(after)}`);
    assert.equal(after[0], before[0], 'ann\'s hold as it was seen');
    assert.match(after[1]!, /^bob \(token \d+\) holding for/);
    await picture(page, 'after-reload');
    await second.release();
    await page.close();
  });
});
