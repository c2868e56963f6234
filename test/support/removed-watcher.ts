import assert from 'node:assert/strict';
import type { WatchEvent } from '../../src/index.js';

/**
 * A one-shot watcher the test removes: removeWatcher tells it so (`dataWatchRemoved` or
 * `childWatchRemoved`, as Java does) and it must hear nothing else, no change of its node.
 * `removals` lists what it was told.
 */
export function removedWatcher(): ((event: WatchEvent) => void) & { removals: string[] } {
  const removals: string[] = [];
  const watcher = (event: WatchEvent): void => {
    assert.ok(event.type === 'dataWatchRemoved' || event.type === 'childWatchRemoved', `a removed watcher must hear nothing but its removal, got ${event.type} ${event.path}`);
    removals.push(`${event.type} ${event.path}`);
  };
  return Object.assign(watcher, { removals });
}
