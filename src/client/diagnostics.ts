import * as diagnostics_channel from 'node:diagnostics_channel';
import type { TracingChannel } from 'node:diagnostics_channel';
import { performance } from 'node:perf_hooks';
import type { RequestSpec, SessionEvent } from '../connection/index.js';
import type { ZooKeeperError } from '../protocol/index.js';
import type { WatchEventType } from './watches/watch-event.js';

/**
 * The client's diagnostics_channel contract (see the README's "Tracing and metrics"). Payloads are
 * plain objects whose fields but `result` and `error` are JSON-safe: ids that are bigint in the API
 * are strings here (a session id in hex, as ZooKeeper's own logs write it), so a log shipper can
 * serialize them as they are. `result` is what the call returned (a Stat holds bigints), `error`
 * what it threw. Nothing is built, and no clock read, while a channel has no subscriber.
 */

/** The context of one client request, traced from the call to its settlement. */
export interface RequestMessage {
  /** The operation: create, getData, multi, sync, ... */
  op: string;
  /** The path as the caller gave it (chroot not included); undefined for multi and multiRead. */
  path: string | undefined;
  /** The session the request was sent on, hex ('0x...'); '0x0' before the first connection. */
  sessionId: string;
  /** The request's xid, once the server answered it; undefined when no reply came (timeout, abort, connection loss). */
  xid?: number;
  /** Milliseconds from the call to its settlement; set before asyncStart/asyncEnd or error are published. */
  duration?: number;
  /** The error's code (NONODE, CONNECTIONLOSS, ...) when it failed. */
  errorCode?: string;
  /** Set by the TracingChannel: the result, or the error. */
  result?: unknown;
  error?: unknown;
}

/** A session state change, published after the client's own state changed and before its listeners run. */
export interface SessionMessage {
  event: SessionEvent;
  /** The session id, hex: with `expired` the session that ended; '0x0' before the first session and between an expiry and the next. */
  sessionId: string;
  /** `host:port` in use, undefined while not connected. */
  server: string | undefined;
  /** The reason's code with suspended, expired and some closes. */
  reasonCode?: string;
}

/** A watch notification the server sent to this session, published before any watcher hears it. */
export interface WatchMessage {
  type: WatchEventType;
  /** The path (chroot not included). */
  path: string;
  sessionId: string;
}

export const requestChannel: TracingChannel<RequestMessage, RequestMessage> = diagnostics_channel.tracingChannel('zklock:client:request');
export const sessionChannel = diagnostics_channel.channel('zklock:client:session');
export const watchChannel = diagnostics_channel.channel('zklock:client:watch');

/** A session id as the payloads carry it: hex, as ZooKeeper's logs write it. */
export function hexId(id: bigint): string {
  return `0x${id.toString(16)}`;
}

/**
 * Sends `spec` through `send`, traced on zklock:client:request. Only called with a subscriber:
 * its context, its wrapped onReply and its clock reads cost nothing otherwise.
 */
export function traceRequest<T>(spec: RequestSpec<T>, sessionId: bigint, send: (spec: RequestSpec<T>) => Promise<T>): Promise<T> {
  const message: RequestMessage = { op: spec.op, path: spec.path, sessionId: hexId(sessionId) };
  const started = performance.now();
  const { onReply } = spec;
  const withXid: RequestSpec<T> = {
    ...spec,
    onReply: (err, xid) => {
      message.xid = xid;
      onReply?.(err, xid);
    },
  };
  return requestChannel.tracePromise(
    () =>
      send(withXid).then(
        (value) => {
          message.duration = performance.now() - started;
          return value;
        },
        (error: unknown) => {
          message.duration = performance.now() - started;
          message.errorCode = (error as Partial<ZooKeeperError> | undefined)?.code;
          throw error;
        },
      ),
    message,
  );
}
