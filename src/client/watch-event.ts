import { EventType } from '../protocol/index.js';

export type WatchEventType = 'created' | 'deleted' | 'dataChanged' | 'childrenChanged' | 'expired' | 'closed';

/**
 * What a watcher receives. `expired` and `closed` end every watch: the server forgot it with the
 * session, or the client was closed. A one-shot watch receives exactly one event.
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
