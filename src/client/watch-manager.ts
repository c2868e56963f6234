import type { WatchLists, WatcherEvent } from '../protocol/index.js';
import { EventType } from '../protocol/index.js';
import type { Chroot } from './paths.js';
import { parentOf } from './paths.js';
import type { PersistentWatch } from './persistent-watch.js';
import type { WatchEvent, WatchEventType, Watcher } from './watch-event.js';
import { eventTypeName } from './watch-event.js';

export type WatchKind = 'data' | 'exist' | 'child';

/**
 * Local watch registrations. The server keeps one watch per (session, path, kind); this fans each
 * event out to every callback registered for that path and kind, each callback once.
 */
export class WatchManager {
  private readonly oneShot: Record<WatchKind, Map<string, Set<Watcher>>> = {
    data: new Map(),
    exist: new Map(),
    child: new Map(),
  };
  private readonly persistent = new Map<string, Set<PersistentWatch>>();
  private readonly recursive = new Map<string, Set<PersistentWatch>>();

  constructor(private readonly chroot: Chroot) {}

  add(kind: WatchKind, path: string, watcher: Watcher): void {
    addTo(this.oneShot[kind], path, watcher);
  }

  /** Removes a callback from every kind on `path`; returns the kinds that now have no callback left. */
  remove(path: string, watcher: Watcher): WatchKind[] {
    const emptied: WatchKind[] = [];
    for (const kind of ['data', 'exist', 'child'] as const) {
      const set = this.oneShot[kind].get(path);
      if (!set?.delete(watcher)) continue;
      if (set.size === 0) {
        this.oneShot[kind].delete(path);
        emptied.push(kind);
      }
    }
    return emptied;
  }

  /** The server keeps one persistent mode per (session, path): is the other mode registered on `path`? */
  hasOtherMode(path: string, recursive: boolean): boolean {
    return (recursive ? this.persistent : this.recursive).has(path);
  }

  /** The one-shot kinds with callbacks on `path`. */
  kindsOn(path: string): Set<WatchKind> {
    return new Set((['data', 'exist', 'child'] as const).filter((kind) => this.oneShot[kind].has(path)));
  }

  addPersistent(watch: PersistentWatch): void {
    addTo(watch.recursive ? this.recursive : this.persistent, watch.path, watch);
  }

  /** True when no other local registration of the same path and mode remains. */
  removePersistent(watch: PersistentWatch): boolean {
    const map = watch.recursive ? this.recursive : this.persistent;
    const set = map.get(watch.path);
    set?.delete(watch);
    if (set && set.size > 0) return false;
    map.delete(watch.path);
    return true;
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
    for (const watcher of new Set(fire)) watcher(event);
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
    for (const kind of ['data', 'exist', 'child'] as const) {
      for (const [path, set] of this.oneShot[kind]) {
        for (const watcher of set) {
          if (fired.has(watcher)) continue;
          fired.add(watcher);
          watcher({ type, path });
        }
      }
      this.oneShot[kind].clear();
    }
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

function addTo<T>(map: Map<string, Set<T>>, key: string, value: T): void {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(value);
}
