import type { WatchLists, WatcherEvent } from '../../protocol/index.js';
import { EventType } from '../../protocol/index.js';
import type { Chroot } from '../paths.js';
import { parentOf } from '../paths.js';
import type { PersistentWatch } from './persistent-watch.js';
import type { WatchEvent, WatchEventType, Watcher } from './watch-event.js';
import { callListener } from '../state/call-listener.js';
import { eventTypeName } from './watch-event.js';

export type WatchKind = 'data' | 'exist' | 'child';

/**
 * The server's one-shot watch tables: data watches (set by getData, and by exists whether or not
 * the node exists) and child watches. removeWatches removes a whole (session, path, class) entry.
 */
export type WatchClass = 'data' | 'child';

export function classOf(kind: WatchKind): WatchClass {
  return kind === 'child' ? 'child' : 'data';
}

/** A request on its way that sets a one-shot watch for `watcher` when its reply arrives. */
export interface WatchInFlight {
  readonly watchClass: WatchClass;
  readonly path: string;
  readonly watcher: Watcher;
  /** A persistent watch of this session on the path serves the watcher: the request must not set a server watch. */
  readonly clientSide: boolean;
  /** The addWatch requests in flight whose registration the client-side service relies on; none when a registered watch covers the path. */
  readonly relyingOn: readonly PersistentWatch[];
  /** removeWatcher was called for this watcher meanwhile: its reply registers nothing. */
  cancelled: boolean;
  /** None of the addWatch requests it relied on was answered: its reply registered nothing, and it must be sent again, setting a server watch. */
  resend: boolean;
}

export const WATCH_CLASSES = ['data', 'child'] as const;
const KINDS = ['data', 'exist', 'child'] as const;

/**
 * Local watch registrations. The server keeps one watch per (session, path, kind); this fans each
 * event out to every callback registered for that path and kind, each callback once.
 *
 * It also decides when the server's watch may be removed: a watcher is registered only when its
 * request's reply arrives, so removing the server watch while another request setting it is in
 * flight would leave that request's watcher registered on a watch the server no longer has.
 *
 * One-shot watches on a path this session watches persistently are served here, from the
 * persistent watch's events, and never set or removed on the server. A 3.8 server keeps one mode
 * per (connection, path) in each of its data and child watch tables (WatcherModeManager, the
 * ZOOKEEPER-4466 bug, fixed in 3.9.0): a one-shot watch set there turns the persistent
 * registration into a one-shot one that the next event ends, and removeWatches removes the entry
 * whole. The persistent watch delivers every event a one-shot watch on its path waits for:
 * created, deleted and dataChanged on the path itself, childrenChanged from a non-recursive one;
 * a recursive one reports children as their creation and deletion, which dispatch turns into the
 * parent's childrenChanged. So the read is sent without a watch, and the watcher is registered
 * here when its reply arrives, as a server watch would be: the server sends the notifications of
 * writes it applied before the read ahead of the reply, those after it behind it. A one-shot
 * watch set on the server before the persistent watch is served the same way from then on: the
 * addWatch replaces its registration on a 3.8 server (and sits beside it on 3.9+).
 */
export class WatchManager {
  private readonly oneShot: Record<WatchKind, Map<string, Watchers>> = {
    data: new Map(),
    exist: new Map(),
    child: new Map(),
  };
  private readonly inFlight: Record<WatchClass, Map<string, Set<WatchInFlight>>> = { data: new Map(), child: new Map() };
  /** (class, path) whose server watch nobody wants any more, kept until the requests in flight setting it are answered. */
  private readonly owed: Record<WatchClass, Set<string>> = { data: new Set(), child: new Set() };
  private readonly persistent = new Map<string, Set<PersistentWatch>>();
  private readonly recursive = new Map<string, Set<PersistentWatch>>();
  /** Persistent watches whose addWatch is in flight: the server registers them before it reads any request sent later. */
  private readonly addsInFlight = new Map<string, Set<PersistentWatch>>();
  /** Persistent watches whose addWatch was answered. */
  private readonly answered = new WeakSet<PersistentWatch>();

  constructor(private readonly chroot: Chroot) {}

  /**
   * A request that sets a watch of `watchClass` on `path` for `watcher` is being sent. With a
   * persistent watch on the path, registered or being added (the server reads the addWatch
   * first), it is `clientSide`: it must not ask the server for a watch.
   */
  begin(watchClass: WatchClass, path: string, watcher: Watcher): WatchInFlight {
    const registered = this.persistent.has(path) || this.recursive.has(path);
    const relyingOn = registered ? [] : [...(this.addsInFlight.get(path) ?? [])];
    const request: WatchInFlight = { watchClass, path, watcher, clientSide: registered || relyingOn.length > 0, relyingOn, cancelled: false, resend: false };
    addTo(this.inFlight[watchClass], path, request);
    return request;
  }

  /**
   * The request is answered (`kind`: the watch its reply set) or failed without setting one we
   * will hear of. Idempotent. True when the server's watch of that class should be removed now.
   */
  end(request: WatchInFlight, kind: WatchKind | undefined): boolean {
    const { watchClass, path } = request;
    if (!removeFrom(this.inFlight[watchClass], path, request)) return false;
    if (kind && !request.cancelled) {
      // An addWatch it relied on was sent before it, so it was answered before it, unless it failed:
      // then the server may have had no watch on the path when it read this request.
      if (request.relyingOn.length === 0 || request.relyingOn.some((watch) => this.answered.has(watch))) {
        addWatcher(this.oneShot[kind], path, request.watcher);
        this.owed[watchClass].delete(path);
        return false;
      }
      request.resend = true;
    }
    if (!this.owed[watchClass].has(path) || this.wanted(watchClass, path)) return false;
    this.owed[watchClass].delete(path);
    return !this.covered(path);
  }

  /**
   * Removes `watcher` (without one, every watcher) of `classes` on `path`, registered or in
   * flight. Each registered one removed is told so, once per class, as in Java
   * (`dataWatchRemoved`, `childWatchRemoved`); one whose request is in flight was never
   * registered and is never called. Returns whether anything matched, and the classes whose
   * server watch should be removed now: nothing local needs it, and no request in flight will
   * register a watcher on it. With such a request in flight the removal waits for its end.
   * Nothing is removed on a path a persistent watch covers: on a 3.8 server that would remove the
   * persistent watch; its own removal takes the unwanted classes along.
   */
  remove(path: string, watcher: Watcher | undefined, classes: readonly WatchClass[] = WATCH_CLASSES): { matched: boolean; unwanted: WatchClass[] } {
    const touched = new Set<WatchClass>();
    const told = new Map<Watcher, Set<WatchClass>>();
    for (const kind of KINDS) {
      const watchClass = classOf(kind);
      const all = watchersIn(this.oneShot[kind].get(path));
      if (all.length === 0 || !classes.includes(watchClass)) continue;
      const taken = watcher === undefined ? all : all.includes(watcher) ? [watcher] : [];
      for (const w of taken) {
        addTo(told, w, watchClass);
        touched.add(watchClass);
      }
      const left = all.filter((w) => !taken.includes(w));
      if (left.length === 0) this.oneShot[kind].delete(path);
      else this.oneShot[kind].set(path, left.length === 1 ? left[0]! : new Set(left));
    }
    for (const watchClass of classes) {
      for (const request of this.inFlight[watchClass].get(path) ?? []) {
        if ((watcher !== undefined && request.watcher !== watcher) || request.cancelled) continue;
        request.cancelled = true;
        touched.add(watchClass);
      }
    }
    for (const [w, removed] of told) {
      for (const watchClass of removed) callListener(w, [{ type: watchClass === 'data' ? 'dataWatchRemoved' : 'childWatchRemoved', path }]);
    }
    const unwanted = [...touched].filter((watchClass) => {
      if (this.hasWatchers(watchClass, path) || this.covered(path)) return false;
      if (!this.wanted(watchClass, path)) return true;
      this.owed[watchClass].add(path);
      return false;
    });
    return { matched: touched.size > 0, unwanted };
  }

  /** A watcher is registered, or will be when a request in flight is answered. */
  private wanted(watchClass: WatchClass, path: string): boolean {
    if (this.hasWatchers(watchClass, path)) return true;
    for (const request of this.inFlight[watchClass].get(path) ?? []) if (!request.cancelled) return true;
    return false;
  }

  private hasWatchers(watchClass: WatchClass, path: string): boolean {
    return watchClass === 'child' ? this.oneShot.child.has(path) : this.oneShot.data.has(path) || this.oneShot.exist.has(path);
  }

  /** A persistent watch of either mode is registered on `path`, or its addWatch is in flight. */
  private covered(path: string): boolean {
    return this.persistent.has(path) || this.recursive.has(path) || this.addsInFlight.has(path);
  }

  /** The server keeps one persistent mode per (session, path): is the other mode registered on `path`, or being added? */
  hasOtherMode(path: string, recursive: boolean): boolean {
    if ((recursive ? this.persistent : this.recursive).has(path)) return true;
    return [...(this.addsInFlight.get(path) ?? [])].some((watch) => watch.recursive !== recursive);
  }

  /** The one-shot classes on `path` whose server watch is needed: registered, or being set by a request in flight. */
  classesWanted(path: string): WatchClass[] {
    return WATCH_CLASSES.filter((watchClass) => this.wanted(watchClass, path));
  }

  /** Its addWatch is being sent: from now on, one-shot watches on the path are served by it. */
  adding(watch: PersistentWatch): void {
    addTo(this.addsInFlight, watch.path, watch);
  }

  /** Its addWatch was answered: it gets the events from now on. */
  added(watch: PersistentWatch): void {
    removeFrom(this.addsInFlight, watch.path, watch);
    this.answered.add(watch);
    addTo(watch.recursive ? this.recursive : this.persistent, watch.path, watch);
  }

  /**
   * Forgets a watch that was removed, or whose addWatch failed (which the server may still have
   * applied). True when no other persistent watch of this client keeps the server's registration
   * of the path: it should go.
   */
  drop(watch: PersistentWatch): boolean {
    removeFrom(this.addsInFlight, watch.path, watch);
    removeFrom(watch.recursive ? this.recursive : this.persistent, watch.path, watch);
    return !this.covered(watch.path);
  }

  /** A notification as watchers hear it: undefined for a type we do not know or a path outside our chroot. */
  decode(raw: WatcherEvent): WatchEvent | undefined {
    const type = eventTypeName(raw.type);
    const path = this.chroot.fromServer(raw.path);
    return !type || path === undefined ? undefined : { type, path };
  }

  /** Delivers a notification (`event` is `decode(raw)`) to every watcher it fires. */
  dispatch(raw: WatcherEvent, event: WatchEvent): void {
    const { path } = event;
    const take = (kind: WatchKind, at: string): Watcher[] => {
      const watchers = watchersIn(this.oneShot[kind].get(at));
      this.oneShot[kind].delete(at);
      return watchers;
    };
    if (raw.type === EventType.NodeChildrenChanged) {
      callOnce(take('child', path), event);
    } else {
      callOnce([...take('data', path), ...take('exist', path), ...(raw.type === EventType.NodeDeleted ? take('child', path) : [])], event);
    }
    // A node created or deleted changed its parent's children, after every read answered before
    // this notification: the only way a recursive watch reports that, and no later than the
    // parent's own childrenChanged, which then finds its watchers gone.
    if ((raw.type === EventType.NodeCreated || raw.type === EventType.NodeDeleted) && path !== '/') {
      const parent = parentOf(path);
      callOnce(take('child', parent), { type: 'childrenChanged', path: parent });
    }
    for (const watch of this.persistent.get(path) ?? []) watch.deliver(event);
    // Walking up the path costs a slice per level: only when a recursive watch exists at all.
    if (this.recursive.size > 0 && raw.type !== EventType.NodeChildrenChanged) {
      for (let p = path; ; p = parentOf(p)) {
        for (const watch of this.recursive.get(p) ?? []) watch.deliver(event);
        if (p === '/') break;
      }
    }
  }

  /** Ends every watch: the server forgot them (session expired) or the client closed. */
  endAll(type: Extract<WatchEventType, 'expired' | 'closed'>): void {
    const fired = new Set<Watcher>();
    for (const kind of KINDS) {
      for (const [path, watchers] of this.oneShot[kind]) {
        for (const watcher of watchersIn(watchers)) {
          if (fired.has(watcher)) continue;
          fired.add(watcher);
          callListener(watcher, [{ type, path }]);
        }
      }
      this.oneShot[kind].clear();
    }
    // Nothing left to remove on a server that forgot the session.
    for (const watchClass of WATCH_CLASSES) this.owed[watchClass].clear();
    for (const map of [this.persistent, this.recursive]) {
      for (const [path, set] of map) for (const watch of set) watch.deliver({ type, path });
      map.clear();
    }
  }

  /**
   * Tells the persistent watches of a gap in their stream: the connection was lost
   * (`disconnected`), or a connection carries the session again (`reconnected`, the watches
   * re-registered by then). One-shot watches need no such word: a reconnect's setWatches fires
   * those whose node changed meanwhile.
   */
  connectionChanged(type: Extract<WatchEventType, 'disconnected' | 'reconnected'>): void {
    for (const map of [this.persistent, this.recursive]) {
      for (const [path, set] of map) for (const watch of set) watch.deliver({ type, path });
    }
  }

  /**
   * What to re-register after a reconnect, in server paths. One-shot watches a persistent watch
   * serves are listed too: the server applies the one-shot lists first (DataTree.setWatches), so
   * it reports a change missed while disconnected to them as it does to any one-shot watch, and
   * then the persistent lists replace their registration on a 3.8 server.
   */
  registrations(): WatchLists {
    const server = (map: Map<string, unknown>): string[] => [...map.keys()].map((p) => this.chroot.toServer(p));
    return {
      data: server(this.oneShot.data),
      exist: server(this.oneShot.exist),
      child: server(this.oneShot.child),
      persistent: server(this.persistent),
      persistentRecursive: server(this.recursive),
    };
  }
}

/** Calls each watcher once, however many of the taken registrations were its own. */
function callOnce(watchers: readonly Watcher[], event: WatchEvent): void {
  for (const watcher of new Set(watchers)) callListener(watcher, [event]);
}

/**
 * The one-shot watchers of a path: the watcher itself while there is one, as there mostly is (a
 * lock's waiter or lease watching its node), a Set for more. A Set per watched path cost about
 * 150 bytes of heap for each of a process's thousands of waiters and leases.
 */
type Watchers = Watcher | Set<Watcher>;

function watchersIn(watchers: Watchers | undefined): Watcher[] {
  if (watchers === undefined) return [];
  return typeof watchers === 'function' ? [watchers] : [...watchers];
}

function addWatcher(map: Map<string, Watchers>, path: string, watcher: Watcher): void {
  const there = map.get(path);
  if (there === undefined) map.set(path, watcher);
  else if (typeof there !== 'function') there.add(watcher);
  else if (there !== watcher) map.set(path, new Set([there, watcher]));
}

function addTo<K, T>(map: Map<K, Set<T>>, key: K, value: T): void {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(value);
}

/** True when `value` was there. */
function removeFrom<T>(map: Map<string, Set<T>>, key: string, value: T): boolean {
  const set = map.get(key);
  if (!set?.delete(value)) return false;
  if (set.size === 0) map.delete(key);
  return true;
}
