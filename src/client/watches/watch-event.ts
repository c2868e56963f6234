import { EventType } from '../../protocol/index.js';

export type WatchEventType =
  | 'created'
  | 'deleted'
  | 'dataChanged'
  | 'childrenChanged'
  | 'expired'
  | 'closed'
  | 'disconnected'
  | 'reconnected'
  | 'dataWatchRemoved'
  | 'childWatchRemoved';

/**
 * What a watcher receives. `expired` and `closed` end every watch: the server forgot it with the
 * session, or the client was closed. A one-shot watch receives exactly one event.
 *
 * `disconnected` and `reconnected` go to persistent watches only (listeners and iterators, with
 * the watch's own path) and end none: changes made between the two are not reported (the server
 * re-registers a persistent watch after a reconnect without replaying what it missed, unlike a
 * one-shot watch), so a cache must read what it watches again on `reconnected`; every change
 * after that read is reported (the read goes after the re-registration, on the same connection).
 *
 * `dataWatchRemoved` and `childWatchRemoved` go to a one-shot watcher that `removeWatcher` or
 * `removeAllWatches` removed (once per class), as Java's removal events: it hears nothing more.
 */
export interface WatchEvent {
  type: WatchEventType;
  path: string;
}

export type Watcher = (event: WatchEvent) => void;

export function eventTypeName(type: number): WatchEventType | undefined {
  switch (type) {
    case EventType.NodeCreated:
      return 'created';
    case EventType.NodeDeleted:
      return 'deleted';
    case EventType.NodeDataChanged:
      return 'dataChanged';
    case EventType.NodeChildrenChanged:
      return 'childrenChanged';
    default:
      return undefined;
  }
}
