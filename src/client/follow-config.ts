import { parseEnsembleConfig } from './ensemble-config.js';
import type { StateListener } from './state/state-listeners.js';
import type { WatchEvent, Watcher } from './watches/watch-event.js';

/** What the follower needs of its client: its public API, nothing more. */
export interface FollowedClient {
  getConfig(options: { watch: Watcher }): Promise<{ data: Buffer }>;
  updateServerAddresses(connectString: string): void;
  onState(listener: StateListener): () => void;
  readonly chroot: string;
}

/**
 * The `followConfig` option: keeps the client's server list equal to the client addresses of the
 * ensemble's members, as /zookeeper/config lists them (Java leaves this to the application: a
 * config watch that calls updateServerAddresses). It reads the config with a watch on every new
 * connection (`connected`: a new session has no watch; `reconnected`: a read that failed with the
 * connection is made good) and again on every event of that watch, one read at a time (an event
 * during a read makes one more read after it, never a pile of them), and applies each newer
 * version once. It holds no timer and no socket: it listens to the client's states until `closed`.
 */
export function followConfig(client: FollowedClient): void {
  let reading = false;
  let again = false;
  let appliedVersion = -1n;
  let appliedHosts = '';
  let stopped = false;

  const apply = (data: Buffer): void => {
    const config = parseEnsembleConfig(data);
    // No member with a client address (a standalone server, a config written before 3.5): nothing
    // to follow, and an empty list would leave the client nowhere to go.
    if (config.connectString === '' || config.version < appliedVersion) return;
    appliedVersion = config.version;
    if (config.connectString === appliedHosts) return;
    appliedHosts = config.connectString;
    client.updateServerAddresses(config.connectString + client.chroot);
  };

  const read = (): void => {
    if (stopped) return;
    if (reading) {
      again = true;
      return;
    }
    reading = true;
    // A failed read (connection lost, session expired) is made good by the next connection's read.
    void client
      .getConfig({ watch: onEvent })
      .then(
        (result) => apply(result.data),
        () => undefined,
      )
      .finally(() => {
        reading = false;
        if (again) {
          again = false;
          read();
        }
      });
  };

  // The same function every time, so the client keeps one watcher however often it is set.
  const onEvent: Watcher = (event: WatchEvent): void => {
    // `closed` ends the follower (below); `expired` is followed by `connected`, which reads again.
    if (event.type !== 'closed' && event.type !== 'expired') read();
  };

  const unsubscribe = client.onState((event) => {
    if (event === 'closed') {
      stopped = true;
      unsubscribe();
    } else if (event === 'connected' || event === 'reconnected') {
      read();
    }
  });
}
