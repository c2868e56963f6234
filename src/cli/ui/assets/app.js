// The page of `zklock ui`. Plain browser JavaScript, no build step. Everything read from
// ZooKeeper is someone else's bytes: it reaches the DOM only as text (textContent, append of
// strings, setAttribute), never as markup; the server's Content-Security-Policy refuses inline
// script on top of that.
/* global formatAge -- from /format.js, the CLI's own formatAge (src/cli/timing.ts), served as is */
'use strict';

const WINDOW_MS = 5 * 60_000;
const MIN_WINDOW_MS = 30_000;
const SVG_NS = 'http://www.w3.org/2000/svg';
const token = document.querySelector('meta[name="zklock-admin-token"]')?.getAttribute('content') ?? '';

const view = {
  admin: false,
  /**
   * The zklock ui host's clock minus ours: ages are its clock's now minus ZooKeeper's ctimes, so
   * they are right when that host's clock agrees with ZooKeeper's (the README says so).
   */
  offset: 0,
  locks: new Map(),
  sections: new Map(),
  order: [],
  /** Heading ids, unique for the page's lifetime. */
  ids: 0,
  /** Where this tab keeps the history it has seen of this ZooKeeper and root, and what it had kept when the page (re)started. */
  storeKey: undefined,
  past: new Map(),
  /** The history changed since it was last kept. */
  unsaved: false,
};
/** Events kept per lock across a reload, as many as the ui server keeps (HISTORY in lock-model.ts). */
const KEPT_PER_LOCK = 40;
/** Events kept across a reload in all, the locks with the latest events first: a few hundred kB of sessionStorage at most. */
const KEPT_IN_ALL = 4000;
const ENDS = ['released', 'forced', 'unseen'];
const main = document.getElementById('locks');
const filter = document.getElementById('filter');

/**
 * What this tab saw before a reload (or before the ui server was restarted), from sessionStorage:
 * per tab, so two tabs on different roots never mix, and gone with the tab. Our own bytes, but
 * possibly from an older page: anything not shaped as an event is dropped.
 */
function loadPast(key) {
  const past = new Map();
  try {
    const saved = JSON.parse(sessionStorage.getItem(key) ?? 'null');
    if (!saved || typeof saved.savedAt !== 'number' || typeof saved.locks !== 'object') return past;
    for (const [path, events] of Object.entries(saved.locks)) {
      if (!Array.isArray(events)) continue;
      const history = events.filter((e) => e && typeof e.t === 'number' && typeof e.type === 'string' && typeof e.owner === 'string' && typeof e.token === 'string');
      past.set(path, { savedAt: saved.savedAt, history });
    }
  } catch {
    // Unreadable or refused storage: the page starts with the ui server's history alone.
  }
  return past;
}

function savePast() {
  if (!view.storeKey || !view.unsaved) return;
  view.unsaved = false;
  const latest = (lock) => lock.history[lock.history.length - 1]?.t ?? 0;
  const locks = [...view.locks.values()].filter((l) => l.history.length > 0).sort((a, b) => latest(b) - latest(a));
  const kept = {};
  let count = 0;
  for (const lock of locks) {
    if (count + lock.history.length > KEPT_IN_ALL) break;
    kept[lock.path] = lock.history;
    count += lock.history.length;
  }
  try {
    sessionStorage.setItem(view.storeKey, JSON.stringify({ savedAt: now(), locks: kept }));
  } catch {
    // Storage full or refused: keeping the history is a convenience, never a reason to stop showing.
  }
}

/**
 * The ui server's history of a lock joined with what this tab kept of it: the same event seen by
 * both counts once, at the earlier time (each is a time by which it had happened). A hold kept
 * open that is neither ended nor held now ended out of sight: it is drawn up to when the tab last
 * looked, never as still held.
 */
function withPast(lock) {
  const past = view.past.get(lock.path);
  view.unsaved = true;
  if (!past) return lock;
  const events = new Map();
  for (const e of [...past.history, ...lock.history]) {
    const key = `${e.type} ${e.token}`;
    const had = events.get(key);
    if (!had || e.t < had.t) events.set(key, e);
  }
  const holding = new Set(lock.holders.map((h) => h.token));
  for (const e of past.history) {
    if (e.type !== 'acquired' || holding.has(e.token) || ENDS.some((type) => events.has(`${type} ${e.token}`))) continue;
    events.set(`unseen ${e.token}`, { t: Math.max(e.t, past.savedAt), type: 'unseen', owner: e.owner, token: e.token });
  }
  lock.history = [...events.values()].sort((a, b) => a.t - b.t).slice(-KEPT_PER_LOCK);
  return lock;
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) node.setAttribute(name, String(value));
  node.append(...children.filter((c) => c !== undefined && c !== null));
  return node;
}

function svgEl(tag, attrs, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs ?? {})) node.setAttribute(name, String(value));
  node.append(...children);
  return node;
}

function now() {
  return Date.now() + view.offset;
}

/** `prefix` says what kind of figure it is: '≥ ' a lower bound, '≤ ' an upper one (a holder whose hold nothing dates). */
function age(since, prefix = '') {
  return el('td', { class: 'age', 'data-since': since, 'data-prefix': prefix }, prefix + formatAge(now() - since));
}

/** A holder's time held, as the server dates it (never its wait); a waiter's time waited. */
function heldOrWaited(c, holder) {
  if (!holder) return age(c.since);
  if (c.heldSince === undefined) return age(c.since, '≤ ');
  return age(c.heldSince, c.heldExact ? '' : '≥ ');
}

function contenderRow(lock, c, role) {
  const holder = role === 'holder';
  const row = el(
    'tr',
    { class: holder ? 'holder' : 'waiter', 'data-node': c.path },
    el('td', { class: 'role' }, role),
    el('td', { class: 'owner' }, c.owner, c.revoking && c.owner !== '(revocation requested)' ? ' (revocation requested)' : '', c.downgraded ? ' (downgraded)' : ''),
    el('td', { class: 'kind' }, c.kind),
    el('td', {}, c.host ?? '—'),
    el('td', { class: 'mono' }, c.pid === undefined ? '—' : String(c.pid)),
    el('td', { class: 'mono' }, c.session),
    heldOrWaited(c, holder),
    // A waiter has no fencing token yet: its czxid becomes one only if it gets the lock.
    el('td', { class: 'mono' }, c.token ?? '—'),
  );
  // At phone width the rows are stacked as cards: each cell names its column itself (app.css).
  [...row.children].forEach((cell, i) => cell.setAttribute('data-label', COLUMNS[i]));
  if (view.admin) {
    const actions = el('td', { class: 'actions' });
    if (lock.kind !== 'semaphore' && lock.kind !== 'simple') actions.append(actionButton('revoke', 'Revoke', lock, c));
    actions.append(' ', actionButton('release', 'Force release', lock, c));
    row.append(actions);
  }
  return row;
}

function actionButton(action, label, lock, c) {
  const button = el('button', { type: 'button', class: action === 'release' ? 'danger' : '', 'data-action': action, 'aria-label': `${label} ${c.path}` }, label);
  button.addEventListener('click', () => confirmAction(action, label, lock, c));
  return button;
}

const COLUMNS = ['Role', 'Owner', 'Kind', 'Host', 'PID', 'Session', 'Held / waited', 'Fencing token'];

/** Tick spacings for the timeline's time axis; the first that gives at most MAX_TICKS ticks is used. */
const TICK_STEPS_MS = [5_000, 10_000, 15_000, 30_000, 60_000, 120_000];
const MAX_TICKS = 6;
/** Roughly the width of one character of a segment's label (10 px system-ui), to cut the holder's name to its segment. */
const LABEL_CHAR_PX = 6;

/** The holder's name cut to what fits in a segment `width` px wide; empty when not even a letter and an ellipsis fit. */
function fitLabel(owner, width) {
  const room = Math.floor((width - 4) / LABEL_CHAR_PX);
  if (room < 2) return '';
  return owner.length <= room ? owner : `${owner.slice(0, room - 1)}…`;
}

/** Holder spans of the last five minutes from the lock's history, each named, with marks where a holder was forced out or asked to go, on a time axis with ticks. */
function timeline(lock) {
  const width = 360;
  const height = 44;
  const end = now();
  // Five minutes at most; a lock seen for less gets the span it has (30 s at least), so fresh handoffs are wide enough to see.
  const first = Math.min(end - MIN_WINDOW_MS, ...lock.history.map((e) => e.t));
  const start = Math.max(end - WINDOW_MS, first);
  const x = (t) => Math.max(0, Math.min(width, ((t - start) / (end - start)) * width));
  const shapes = [];
  const ends = new Map();
  for (const e of lock.history) if (e.type === 'released' || e.type === 'forced' || e.type === 'unseen') ends.set(e.token, e);
  let handoffs = 0;
  let forced = 0;
  for (const e of lock.history) {
    if (e.type === 'acquired') {
      const gone = ends.get(e.token);
      const until = gone ? gone.t : end;
      if (until < start) continue;
      if (e.t >= start) handoffs++;
      const w = Math.max(1.5, x(until) - x(e.t) - 1);
      const how = !gone ? `holding for ${formatAge(until - e.t)}` : gone.type === 'unseen' ? `held at least ${formatAge(until - e.t)}, then out of this page's sight` : `${gone.type} after ${formatAge(until - e.t)}`;
      const rect = svgEl('rect', { class: gone?.type === 'forced' ? 'span forced' : 'span', x: x(e.t), y: 4, width: w, height: 16 });
      rect.append(svgEl('title', {}, `${e.owner} (token ${e.token}) ${how}`));
      shapes.push(rect);
      const name = fitLabel(e.owner, w);
      if (name) shapes.push(svgEl('text', { class: 'holder', x: x(e.t) + 2, y: 16, 'data-token': e.token }, name));
    } else if ((e.type === 'forced' || e.type === 'revoke') && e.t >= start) {
      if (e.type === 'forced') forced++;
      const mark = svgEl('line', { class: `mark-${e.type}`, x1: x(e.t), x2: x(e.t), y1: 1, y2: 24 });
      mark.append(svgEl('title', {}, `${e.type === 'forced' ? 'force released' : 'revocation requested'}: ${e.owner}`));
      shapes.push(mark);
    }
  }
  // Ticks back from now, so the labels read as "so long ago" like the ages in the table.
  const step = TICK_STEPS_MS.find((s) => (end - start) / s <= MAX_TICKS) ?? TICK_STEPS_MS[TICK_STEPS_MS.length - 1];
  const ticks = [];
  for (let ago = step; ago <= end - start; ago += step) {
    const at = x(end - ago);
    ticks.push(svgEl('line', { class: 'tick', x1: at, x2: at, y1: 22, y2: 27 }));
    // The leftmost label would be cut by the edge: anchored at its start there.
    if (at > 30) ticks.push(svgEl('text', { class: 'tick-label', x: at, y: 38, 'text-anchor': 'middle' }, `-${formatAge(ago)}`));
  }
  const label = `Holders over the last ${formatAge(end - start)}: ${handoffs} acquisitions, ${forced} forced out`;
  const chart = svgEl(
    'svg',
    { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': label },
    svgEl('line', { class: 'axis', x1: 0, x2: width, y1: 22, y2: 22 }),
    ...shapes,
    ...ticks,
    svgEl('text', { x: width, y: 38, 'text-anchor': 'end' }, 'now'),
  );
  return el('figure', { class: 'timeline' }, chart, el('figcaption', {}, label));
}

/** Bars of how long recent holders waited for the lock, and of how long the current waiters have waited so far. */
function waitFigure(lock) {
  const t = now();
  const waits = [...lock.waits.map((ms) => ({ ms, past: true })), ...lock.waiters.map((w) => ({ ms: t - w.since, past: false }))];
  if (waits.length === 0) return undefined;
  const width = 240;
  const height = 34;
  const max = Math.max(...waits.map((w) => w.ms), 1);
  const bar = width / Math.max(waits.length, 12);
  const bars = waits.map((w, i) => {
    const h = Math.max(1, (w.ms / max) * 26);
    const rect = svgEl('rect', { class: 'bar', x: i * bar, y: 28 - h, width: Math.max(1, bar - 2), height: h, opacity: w.past ? 1 : 0.45 });
    rect.append(svgEl('title', {}, `${w.past ? 'waited' : 'waiting for'} ${formatAge(w.ms)}`));
    return rect;
  });
  const past = lock.waits;
  const label = past.length > 0 ? `Waits before acquiring (last ${past.length}): longest ${formatAge(Math.max(...past))}; faded: waiting now` : 'Waiting now (no acquisition seen yet)';
  const chart = svgEl('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': label }, svgEl('line', { class: 'axis', x1: 0, x2: width, y1: 28.5, y2: 28.5 }), ...bars);
  return el('figure', { class: 'waits' }, chart, el('figcaption', {}, label));
}

function lockSection(lock) {
  const id = `lock-${++view.ids}`;
  const holder = lock.holders[0];
  const waiting = lock.waiters.length + lock.moreWaiters;
  const state = holder
    ? el('span', { class: 'state-held' }, `held by ${holder.owner}${lock.holders.length > 1 ? ` and ${lock.holders.length - 1} more` : ''}`)
    : el('span', { class: 'state-free' }, 'free');
  const heading = el('h2', { id }, el('span', { class: 'path' }, lock.path), el('span', { class: 'badge' }, lock.kind), state, el('span', { class: 'badge' }, `${waiting} waiting`));
  const columns = [...COLUMNS];
  if (view.admin) columns.push('Actions');
  const body = el('tbody', {});
  lock.holders.forEach((c) => body.append(contenderRow(lock, c, 'holder')));
  lock.waiters.forEach((c, i) => body.append(contenderRow(lock, c, `waiter ${i + 1}`)));
  if (lock.moreWaiters > 0) body.append(el('tr', {}, el('td', { class: 'more', colspan: columns.length }, `and ${lock.moreWaiters} more waiters`)));
  const table = lock.holders.length + lock.waiters.length > 0 ? el('table', {}, el('thead', {}, el('tr', {}, ...columns.map((c) => el('th', { scope: 'col' }, c)))), body) : undefined;
  const section = el('section', { class: 'lock', 'data-path': lock.path, 'aria-labelledby': id }, heading, table, el('div', { class: 'figures' }, timeline(lock), waitFigure(lock)));
  section.hidden = !matches(lock);
  return section;
}

function matches(lock) {
  const q = filter.value.trim().toLowerCase();
  if (!q) return true;
  return lock.path.toLowerCase().includes(q) || [...lock.holders, ...lock.waiters].some((c) => c.owner.toLowerCase().includes(q));
}

function insertionIndex(path) {
  let lo = 0;
  let hi = view.order.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (view.order[mid] < path) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Replaces a lock's section, keeping keyboard focus on the same button if it had it. */
function upsert(lock) {
  withPast(lock);
  view.locks.set(lock.path, lock);
  const old = view.sections.get(lock.path);
  if (!old) {
    const i = insertionIndex(lock.path);
    view.order.splice(i, 0, lock.path);
    const section = lockSection(lock);
    const next = view.sections.get(view.order[i + 1]);
    main.insertBefore(section, next ?? null);
    view.sections.set(lock.path, section);
    return;
  }
  const focused = old.contains(document.activeElement) ? document.activeElement : undefined;
  const section = lockSection(lock);
  old.replaceWith(section);
  view.sections.set(lock.path, section);
  if (focused instanceof HTMLElement && focused.dataset.action) {
    const row = focused.closest('tr')?.dataset.node;
    for (const button of section.querySelectorAll('button[data-action]')) {
      if (button.dataset.action === focused.dataset.action && button.closest('tr')?.dataset.node === row) button.focus();
    }
  }
}

function remove(path) {
  view.sections.get(path)?.remove();
  view.sections.delete(path);
  view.locks.delete(path);
  view.order.splice(insertionIndex(path), 1);
}

function summarize() {
  let held = 0;
  let waiting = 0;
  for (const lock of view.locks.values()) {
    if (lock.holders.length > 0) held++;
    waiting += lock.waiters.length + lock.moreWaiters;
  }
  document.getElementById('summary').textContent = `${view.locks.size} locks, ${held} held, ${waiting} waiting`;
  countHidden();
}

/** Says how many locks the filter hides, so an empty-looking page is never mistaken for no locks. */
function countHidden() {
  let hidden = 0;
  for (const section of view.sections.values()) if (section.hidden) hidden++;
  document.getElementById('hidden').textContent = hidden > 0 ? `${hidden} of ${view.sections.size} locks hidden by the filter` : '';
}

function showStatus(status) {
  const line = document.getElementById('connection');
  line.dataset.state = status.state;
  const since = new Date(status.since).toLocaleTimeString();
  const how = { poll: 'polling every second (this server has no persistent watches)', watch: 'live (one persistent recursive watch)', starting: 'reading the tree…' }[status.mode];
  const text = {
    connected: `Connected · ${how}`,
    disconnected: `ZooKeeper unreachable since ${since}: reconnecting; showing the last known state`,
    expired: `Session expired at ${since}: starting a new one; showing the last known state`,
    closed: 'Connection to ZooKeeper closed',
    offline: 'Lost contact with zklock ui: retrying',
  }[status.state];
  line.dataset.mode = status.mode ?? '';
  const unreadable = status.unreadable > 0 ? ` · ${status.unreadable} unreadable (their ACL refuses our credentials)` : '';
  const missing = status.rootMissing ? ` · ${view.root ?? 'the root'} does not exist: no locks to show until it is made` : '';
  line.textContent = `${text}${missing}${status.truncated ? ' · tree cut at --max-nodes' : ''}${unreadable}${status.error ? ` · last error: ${status.error}` : ''}`;
}

function toast(message) {
  const box = document.getElementById('toast');
  box.textContent = message;
  box.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => (box.hidden = true), 6000);
}

function confirmAction(action, label, lock, c) {
  const dialog = document.getElementById('confirm');
  document.getElementById('confirm-title').textContent = action === 'release' ? 'Force release: delete this contender\'s node?' : 'Ask this contender to release the lock?';
  document.getElementById('confirm-detail').textContent = `${c.path} — owner ${c.owner}, session ${c.session}, ${formatAge(now() - c.since)} old`;
  document.getElementById('confirm-ok').textContent = label;
  dialog.returnValue = '';
  dialog.onclose = async () => {
    // The button the dialog would give focus back to may have been redrawn meanwhile: focus its lock's section.
    if (!document.activeElement || document.activeElement === document.body) {
      const section = view.sections.get(lock.path);
      const button = [...(section?.querySelectorAll('button[data-action]') ?? [])].find((b) => b.dataset.action === action && b.closest('tr')?.dataset.node === c.path);
      if (section && !button) section.tabIndex = -1;
      (button ?? section)?.focus();
    }
    if (dialog.returnValue !== 'ok') return;
    try {
      const response = await fetch(`/api/${action}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Zklock-Token': token },
        body: JSON.stringify({ node: c.path }),
      });
      const result = await response.json();
      toast(`${label} ${c.path}: ${result.message}`);
    } catch (error) {
      toast(`${label} failed: ${error}`);
    }
  };
  dialog.showModal();
}

function connect() {
  const events = new EventSource('/events');
  events.addEventListener('hello', (event) => {
    const hello = JSON.parse(event.data);
    view.offset = hello.now - Date.now();
    view.admin = hello.admin;
    view.root = hello.root;
    document.getElementById('root').textContent = hello.root;
    const id = hello.identity;
    document.getElementById('identity').textContent = `ZooKeeper ${id.connect}${id.tls ? ' over TLS' : ''} as ${id.auth.length > 0 ? id.auth.join(', ') : 'anyone (no auth)'}${hello.admin ? ' · admin actions ON' : ''}`;
    // Again after the ui server was restarted: what this page saw so far is kept first, up to now.
    view.unsaved = view.locks.size > 0;
    savePast();
    view.storeKey = `zklock-ui-history ${id.connect} ${hello.root}`;
    view.past = loadPast(view.storeKey);
    main.replaceChildren();
    view.locks.clear();
    view.sections.clear();
    view.order = hello.locks.map((l) => l.path);
    const fragment = document.createDocumentFragment();
    for (const lock of hello.locks) {
      withPast(lock);
      view.locks.set(lock.path, lock);
      const section = lockSection(lock);
      view.sections.set(lock.path, section);
      fragment.append(section);
    }
    main.append(fragment);
    showStatus(hello.status);
    summarize();
  });
  events.addEventListener('change', (event) => {
    const change = JSON.parse(event.data);
    view.offset = change.now - Date.now();
    for (const path of change.removed) remove(path);
    for (const lock of change.upserts) upsert(lock);
    summarize();
  });
  events.addEventListener('status', (event) => showStatus(JSON.parse(event.data).status));
  events.addEventListener('error', () => showStatus({ state: 'offline', since: Date.now() }));
}

filter.addEventListener('input', () => {
  for (const [path, section] of view.sections) section.hidden = !matches(view.locks.get(path));
  countHidden();
});

/**
 * Ages and timelines move with the clock. Only the sections on screen are redrawn each tick (with
 * a thousand locks the rest would cost the page more than the changes themselves); a section
 * coming into view is brought up to date at once.
 */
const onScreen = new Set();
const visibility = new IntersectionObserver((entries) => {
  for (const entry of entries) {
    if (entry.isIntersecting) {
      onScreen.add(entry.target);
      refresh(entry.target, true);
    } else onScreen.delete(entry.target);
  }
});
new MutationObserver((records) => {
  for (const record of records) {
    for (const node of record.addedNodes) if (node instanceof Element) visibility.observe(node);
    for (const node of record.removedNodes) {
      if (!(node instanceof Element)) continue;
      visibility.unobserve(node);
      onScreen.delete(node);
    }
  }
}).observe(main, { childList: true });

function refresh(section, figures) {
  const t = now();
  for (const cell of section.querySelectorAll('td.age')) cell.textContent = (cell.dataset.prefix ?? '') + formatAge(t - Number(cell.dataset.since));
  const lock = view.locks.get(section.dataset.path);
  if (figures && lock) section.querySelector('.figures')?.replaceWith(el('div', { class: 'figures' }, timeline(lock), waitFigure(lock)));
}

let ticks = 0;
setInterval(() => {
  // The timelines slide slowly: redrawn every few seconds, the ages every second.
  const figures = ++ticks % 5 === 0;
  for (const section of onScreen) refresh(section, figures);
  savePast();
}, 1000);
// A reload right after a change keeps it too, and the time the page last looked.
addEventListener('pagehide', () => {
  view.unsaved = true;
  savePast();
});

connect();
