import type { EventEmitter } from 'node:events';
import { ZooKeeperError } from '../../src/index.js';

/**
 * Records a client's state changes and failures as they happen: `state <event>` for each state
 * change, `connectionError` and `authFailed`, each followed by `:<code>` when it carries a
 * ZooKeeperError.
 */
export function recordEvents(client: EventEmitter): string[] {
  const events: string[] = [];
  const add = (name: string, reason?: unknown): void => {
    events.push(reason instanceof ZooKeeperError ? `${name}:${reason.code}` : name);
  };
  client.on('state', (event: string, reason?: unknown) => add(`state ${event}`, reason));
  client.on('connectionError', (reason: unknown) => add('connectionError', reason));
  client.on('authFailed', (reason: unknown) => add('authFailed', reason));
  return events;
}
