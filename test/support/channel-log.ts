import type { Channel, TracingChannel } from 'node:diagnostics_channel';

/** One event seen on a channel: which of a tracing channel's five (or 'publish'), and a copy of its message then. */
export interface Seen<T> {
  event: 'start' | 'end' | 'asyncStart' | 'asyncEnd' | 'error' | 'publish';
  message: T;
}

const TRACING_EVENTS = ['start', 'end', 'asyncStart', 'asyncEnd', 'error'] as const;

/**
 * Records what `channel` publishes from now on, each message copied as it was at that event (a
 * tracing channel's context grows between its events), until `stop()`; `filter` picks the messages.
 */
export function channelLog<T extends object>(channel: TracingChannel<T, T> | Channel, filter: (message: T) => boolean = () => true): { seen: Seen<T>[]; stop: () => void } {
  const seen: Seen<T>[] = [];
  const subscriptions: [Channel, (message: unknown) => void][] = [];
  const on = (sub: Channel, event: Seen<T>['event']): void => {
    const listener = (message: unknown): void => {
      if (filter(message as T)) seen.push({ event, message: { ...(message as T) } });
    };
    sub.subscribe(listener);
    subscriptions.push([sub, listener]);
  };
  if ('tracePromise' in channel) for (const event of TRACING_EVENTS) on(channel[event], event);
  else on(channel, 'publish');
  return { seen, stop: () => subscriptions.forEach(([sub, listener]) => sub.unsubscribe(listener)) };
}
