import type { WatchLists, WatcherEvent } from '../../protocol/index.js';
import { callListener } from '../state/call-listener.js';
import type { WatchEventType, Watcher } from './watch-event.js';
import { eventTypeName } from './watch-event.js';

/** ZooDefs.CONFIG_NODE: the ensemble's dynamic configuration, at this path whatever the chroot. */
export const CONFIG_NODE = '/zookeeper/config';

/**
 * The one-shot watchers of getConfig under a chroot. The watch manager keys its watches by the
 * user's paths, which the chroot prefixes on the way to the server and strips from events; the
 * config node lies outside every chroot, so its watch is kept here, by its server path, and its
 * events (which the manager drops as outside the chroot) are delivered from here. Without a
 * chroot the two paths are the same and getConfig is a getData of the node.
 */
export class ConfigWatchers {
  private readonly watchers = new Set<Watcher>();

  add(watcher: Watcher): void {
    this.watchers.add(watcher);
  }

  /** A notification for the config node fires every watcher once. */
  dispatch(raw: WatcherEvent): void {
    const type = raw.path === CONFIG_NODE ? eventTypeName(raw.type) : undefined;
    if (type) this.fire(type);
  }

  /** The session expired or the client closed: the watchers hear it, as every one-shot watcher does. */
  endAll(type: Extract<WatchEventType, 'expired' | 'closed'>): void {
    this.fire(type);
  }

  /** The watch lists to re-register after a reconnect, with the config node's data watch when someone waits on it. */
  withRegistration(lists: WatchLists): WatchLists {
    return this.watchers.size === 0 ? lists : { ...lists, data: [...lists.data, CONFIG_NODE] };
  }

  private fire(type: WatchEventType): void {
    const watchers = [...this.watchers];
    this.watchers.clear();
    for (const watcher of watchers) callListener(watcher, [{ type, path: CONFIG_NODE }]);
  }
}
