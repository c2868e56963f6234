import type { WatchLists, WatcherEvent } from '../protocol/index.js';
import { EventType } from '../protocol/index.js';
import type { Chroot } from './paths.js';
import { parentOf } from './paths.js';
import type { PersistentWatch } from './persistent-watch.js';
import type { WatchEvent, WatchEventType, Watcher } from './watch-event.js';
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
  /** removeWatcher was called for this watcher meanwhile: its reply registers nothing. */
  cancelled: boolean;
}

const KINDS = ['data', 'exist', 'child'] as const;
const CLASSES = ['data', 'child'] as const;

/**
 * Local watch registrations. The server keeps one watch per (session, path, kind); this fans each
 * event out to every callback registered for that path and kind, each callback once.
 *
 * It also decides when the server's watch may be removed: a watcher is registered only when its
 * request's reply arrives, so removing the server watch while another request setting it is in
 * flight would leave that request's watcher registered on a watch the server no longer has.
 */
export class WatchManager {
  private readonly oneShot: Record<WatchKind, Map<string, Set<Watcher>>> = {
    data: new Map(),
    exist: new Map(),
    child: new Map(),
  };
  private readonly inFlight: Record<WatchClass, Map<string, Set<WatchInFlight>>> = { data: new Map(), child: new Map() };
  /** (class, path) whose server watch nobody wants any more, kept until the requests in flight setting it are answered. */
  private readonly owed: Record<WatchClass, Set<string>> = { data: new Set(), child: new Set() };
  private readonly persistent = new Map<string, Set<PersistentWatch>>();
  private readonly recursive = new Map<string, Set<PersistentWatch>>();

  constructor(private readonly chroot: Chroot) {}

  /** A request that sets a watch of `watchClass` on `path` is being sent. */
  begin(watchClass: WatchClass, path: string, watcher: Watcher): WatchInFlight {
    const request: WatchInFlight = { watchClass, path, watcher, cancelled: false };
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
      addTo(this.oneShot[kind], path, request.watcher);
      this.owed[watchClass].delete(path);
      return false;
    }
    if (!this.owed[watchClass].has(path) || this.wanted(watchClass, path)) return false;
    this.owed[watchClass].delete(path);
    return true;
  }

  /**
   * Removes a callback from every kind on `path`, registered or in flight; returns the classes
   * whose server watch should be removed now: nothing local needs it, and no request in flight
   * will register a watcher on it. With such a request in flight the removal waits for its end.
   */
  remove(path: string, watcher: Watcher): WatchClass[] {
    const touched = new Set<WatchClass>();
    for (const kind of KINDS) {
      const set = this.oneShot[kind].get(path);
      if (!set?.delete(watcher)) continue;
      if (set.size === 0) this.oneShot[kind].delete(path);
      touched.add(classOf(kind));
    }
    for (const watchClass of CLASSES) {
      for (const request of this.inFlight[watchClass].get(path) ?? []) {
        if (request.watcher !== watcher || request.cancelled) continue;
        request.cancelled = true;
        touched.add(watchClass);
      }
    }
    return [...touched].filter((watchClass) => {
      if (this.hasWatchers(watchClass, path)) return false;
      if (!this.wanted(watchClass, path)) return true;
      this.owed[watchClass].add(path);
      return false;
    });
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

  /** The server keeps one persistent mode per (session, path): is the other mode registered on `path`? */
  hasOtherMode(path: string, recursive: boolean): boolean {
    return (recursive ? this.persistent : this.recursive).has(path);
  }

  /** The one-shot classes on `path` whose server watch is needed: registered, or being set by a request in flight. */
  classesWanted(path: string): WatchClass[] {
    return CLASSES.filter((watchClass) => this.wanted(watchClass, path));
  }

  addPersistent(watch: PersistentWatch): void {
    addTo(watch.recursive ? this.recursive : this.persistent, watch.path, watch);
  }

  /** True when no other local registration of the same path and mode remains. */
  removePersistent(watch: PersistentWatch): boolean {
    const map = watch.recursive ? this.recursive : this.persistent;
    removeFrom(map, watch.path, watch);
    return !map.has(watch.path);
  }

  dispatch(raw: WatcherEvent): void {
    const type = eventTypeName(raw.type);
    const path = this.chroot.fromServer(raw.path);
    if (!type || path === undefined) return;
    const event: WatchEvent = { type, path };
    const fire: Watcher[] = [];
    const take = (kind: WatchKind): void => {
      const set = this.oneShot[kind].get(path);
      if (!set) return;
      this.oneShot[kind].delete(path);
      fire.push(...set);
    };
    if (raw.type === EventType.NodeChildrenChanged) {
      take('child');
    } else {
      take('data');
      take('exist');
      if (raw.type === EventType.NodeDeleted) take('child');
    }
    for (const watcher of new Set(fire)) callWatcher(watcher, event);
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
      for (const [path, set] of this.oneShot[kind]) {
        for (const watcher of set) {
          if (fired.has(watcher)) continue;
          fired.add(watcher);
          callWatcher(watcher, { type, path });
        }
      }
      this.oneShot[kind].clear();
    }
    // Nothing left to remove on a server that forgot the session.
    for (const watchClass of CLASSES) this.owed[watchClass].clear();
    for (const map of [this.persistent, this.recursive]) {
      for (const [path, set] of map) for (const watch of set) watch.deliver({ type, path });
      map.clear();
    }
  }

  /** What to re-register after a reconnect, in server paths. */
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

/**
 * A throwing watcher must not cost the other watchers their event, nor the connection the frames
 * after this one: its error is rethrown on its own, as an uncaught exception of the caller's code.
 */
function callWatcher(watcher: Watcher, event: WatchEvent): void {
  try {
    watcher(event);
  } catch (error) {
    queueMicrotask(() => {
      throw error;
    });
  }
}

function addTo<T>(map: Map<string, Set<T>>, key: string, value: T): void {
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
