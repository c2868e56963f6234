import { performance } from 'node:perf_hooks';
import type { RequestSpec } from '../connection/index.js';
import type { Reader, Writer } from '../protocol/index.js';
import {
  AddWatchMode,
  OpCode,
  WatcherType,
  ZooKeeperError,
  writePathInt,
  writePathWatch,
} from '../protocol/index.js';
import { validatePath } from './paths.js';
import type { PersistentWatchOptions } from './watches/persistent-watch.js';
import { PersistentWatch } from './watches/persistent-watch.js';
import { CONFIG_NODE } from './watches/config-watch.js';
import type { ConfigResult } from './ensemble-config.js';
import { readConfigResult } from './ensemble-config.js';
import type { Where } from './validate.js';
import {
  checkBoolean,
  checkBounds,
  checkFunction,
  checkOptions,
  invalidArgument,
} from './validate.js';
import type { Watcher } from './watches/watch-event.js';
import type { WatchClass, WatchKind } from './watches/watch-manager.js';
import { WATCH_CLASSES } from './watches/watch-manager.js';
import type { CallOptions, DataResult, OneShotWatchType, WatchOptions } from './client-options.js';
import {
  ClientSession,
  at,
  callBounds,
  operation,
  readDataResult,
} from './client-session.js';

/** removeWatches' type for each one-shot watch class (data covers the watches exists sets). */
const REMOVE_TYPE: Record<WatchClass, number> = { data: WatcherType.data, child: WatcherType.children };

/** The watches of a ZooKeeperClient: persistent ones, removing and checking them, the config watch, and the one path (watchedRequest) by which a read sets a one-shot watch. */
export abstract class ClientWatches extends ClientSession {
  /** getData as `op` (getConfig without a chroot is one). */
  protected readData(op: string, path: string, options: WatchOptions | undefined): Promise<DataResult>;
  protected readData<T>(op: string, path: string, options: WatchOptions | undefined, read: (r: Reader) => T): Promise<T>;
  protected readData<T>(op: string, path: string, options: WatchOptions | undefined, read: (r: Reader) => T | DataResult = readDataResult): Promise<T | DataResult> {
    return operation(() => {
      const server = this.serverPath(path, op);
      const where = at(op, path);
      const o = checkOptions(options, where);
      const watch = checkFunction(o.watch, 'watch', where);
      const spec = checkBounds(o, where);
      return this.watchedRequest('data', watch, (err) => (err === 0 ? 'data' : undefined), (setWatch) => ({
        type: OpCode.getData,
        op,
        path,
        write: (w) => writePathWatch(w, server, setWatch),
        read,
        ...spec,
      }));
    });
  }

  /**
   * A persistent watch on `path` (and, with `recursive`, every node below it). One-shot watches
   * on the same path are then served by it, without a server watch of their own (see WatchManager).
   */
  addWatch(path: string, options?: CallOptions & PersistentWatchOptions & { recursive?: boolean }): Promise<PersistentWatch> {
    return operation(() => {
      const server = this.serverPath(path, 'addWatch');
      const where = at('addWatch', path);
      const o = checkOptions(options, where);
      const recursive = checkBoolean(o.recursive, 'recursive', where) ?? false;
      const spec = checkBounds(o, where);
      if (this.watches.hasOtherMode(path, recursive)) {
        throw new ZooKeeperError('INVALID_ARGUMENT', 'the server keeps one persistent watch mode per path and session: remove the other mode first', { op: 'addWatch', path });
      }
      const watch = new PersistentWatch(path, recursive, (w) => this.removePersistentWatch(w), o);
      this.watches.adding(watch);
      const request = {
        type: OpCode.addWatch,
        op: 'addWatch',
        path,
        write: (w: Writer) => writePathInt(w, server, recursive ? AddWatchMode.persistentRecursive : AddWatchMode.persistent),
        onReply: (err: number) => {
          if (err === 0) this.watches.added(watch);
        },
        ...spec,
      };
      // One `then` from the session's promise, as every operation (see send).
      return this.request(request).then(
        () => watch,
        (error: unknown) => {
          // A request that timed out or was aborted after it was sent may still be applied.
          if (this.watches.drop(watch)) this.clearServerWatches(path, recursive).catch(() => undefined);
          throw error;
        },
      );
    });
  }

  private async removePersistentWatch(watch: PersistentWatch): Promise<void> {
    if (this.watches.drop(watch)) await this.clearServerWatches(watch.path, watch.recursive);
  }

  /**
   * Ends this session's persistent registration of `path` on the server and keeps its one-shot
   * watches. Those the persistent watch served get a server watch first, while the persistent
   * registration still reports every event, so that none falls between the two. Then the
   * persistent type is removed (a 3.9+ server), and the one-shot classes nobody wants: on a 3.8
   * server, which knows no persistent type (MARSHALLINGERROR), that removes the persistent
   * registration, and on 3.9+ a one-shot registration left beside it. All go out at once, so no
   * request this client makes later can come between them.
   */
  private async clearServerWatches(path: string, recursive: boolean): Promise<void> {
    const wanted = this.watches.classesWanted(path);
    await Promise.all([
      ...wanted.map((watchClass) => this.rearmOneShot(path, watchClass)),
      this.removeServerWatch(path, recursive ? WatcherType.persistentRecursive : WatcherType.persistent),
      ...WATCH_CLASSES.filter((watchClass) => !wanted.includes(watchClass)).map((watchClass) => this.removeServerWatch(path, REMOVE_TYPE[watchClass])),
    ]);
  }

  /** Sets again a one-shot watch of `watchClass` on `path`, for the watchers registered or being registered by requests in flight. */
  private rearmOneShot(path: string, watchClass: WatchClass): Promise<unknown> {
    const server = this.chrootMap.toServer(path);
    // exists sets a watch whether or not the node exists; getChildren on a vanished node fails,
    // and then its child watchers already had (or will have) their deletion event.
    const type = watchClass === 'data' ? OpCode.exists : OpCode.getChildren;
    return this.send({ type, op: 'rearmWatch', path, write: (w) => writePathWatch(w, server, true) }).catch(() => undefined);
  }

  /**
   * Removes a one-shot watcher from `path`, also one whose request is still awaiting its reply
   * (that one is never called). A registered one is called once more, with `dataWatchRemoved` or
   * `childWatchRemoved` (once per class it was on), as in Java. Rejects with NOWATCHER, changing
   * nothing, when the watcher is not on `path`: it fired already, or never was. The server's
   * watch is removed too once no local watcher needs it and no request in flight of this client
   * is setting it for another watcher (then when the last such request is answered without
   * registering one).
   */
  async removeWatcher(path: string, watcher: Watcher, options?: CallOptions): Promise<void> {
    validatePath(path, 'removeWatcher');
    const where = at('removeWatcher', path);
    checkFunction(watcher, 'watcher', where, true);
    await this.removeWatchers(path, watcher, WATCH_CLASSES, callBounds(options, where), where);
  }

  /**
   * Removes every one-shot watcher of this client on `path` of `type` (`any`: both), each told as
   * by {@link removeWatcher}, and the server's watch; NOWATCHER when there was none. Persistent
   * watches are not touched: `remove()` them.
   */
  async removeAllWatches(path: string, type: OneShotWatchType, options?: CallOptions): Promise<void> {
    validatePath(path, 'removeAllWatches');
    const where = at('removeAllWatches', path);
    const classes = watchClassesOf(type, where);
    await this.removeWatchers(path, undefined, classes, callBounds(options, where), where);
  }

  private async removeWatchers(path: string, watcher: Watcher | undefined, classes: readonly WatchClass[], options: CallOptions, where: Where): Promise<void> {
    const { matched, unwanted } = this.watches.remove(path, watcher, classes);
    if (!matched) throw new ZooKeeperError('NOWATCHER', watcher ? 'this watcher is not on the path' : 'no watcher of this client on the path', where);
    await Promise.all(unwanted.map((watchClass) => this.removeServerWatch(path, REMOVE_TYPE[watchClass], options)));
  }

  /**
   * Resolves when the server holds a watch of this session of `type` on `path` (a persistent
   * watch counts for both), else rejects with NOWATCHER. One-shot watches a persistent watch of
   * this client serves have no server watch of their own (see the README).
   */
  checkWatches(path: string, type: OneShotWatchType, options?: CallOptions): Promise<void> {
    return operation(() => {
      const server = this.serverPath(path, 'checkWatches');
      const where = at('checkWatches', path);
      watchClassesOf(type, where);
      const spec = callBounds(options, where);
      return this.send<void>({ type: OpCode.checkWatches, op: 'checkWatches', path, write: (w) => writePathInt(w, server, WatcherType[type]), ...spec });
    });
  }

  /**
   * The ensemble's dynamic configuration (the data of /zookeeper/config, whatever the chroot:
   * under one, a getData of that path reads below the chroot instead). Its `watch` fires on the
   * next reconfiguration, with the path /zookeeper/config.
   */
  getConfig(options?: WatchOptions): Promise<ConfigResult> {
    if (!this.chrootMap.prefix) return this.readData('getConfig', CONFIG_NODE, options, readConfigResult);
    return operation(() => {
      const where = { op: 'getConfig', path: CONFIG_NODE };
      const o = checkOptions(options, where);
      const watch = checkFunction(o.watch, 'watch', where);
      const spec = checkBounds(o, where);
      return this.send({
        type: OpCode.getData,
        op: 'getConfig',
        path: CONFIG_NODE,
        write: (w) => writePathWatch(w, CONFIG_NODE, watch !== undefined),
        read: readConfigResult,
        onReply: (err) => {
          if (err === 0 && watch) this.configWatchers.add(watch);
        },
        ...spec,
      });
    });
  }

  private async removeServerWatch(path: string, type: number, options: CallOptions = {}): Promise<void> {
    // options: checked by the caller.
    if (this.state === 'closed' || this.state === 'expired') return;
    const server = this.chrootMap.toServer(path);
    try {
      await this.send({ type: OpCode.removeWatches, op: 'removeWatches', path, write: (w) => writePathInt(w, server, type), signal: options.signal, timeout: options.timeout });
    } catch (error) {
      // NOWATCHER: the watch already fired or went with the session; CONNECTIONLOSS: not re-registered after a reconnect;
      // MARSHALLINGERROR: a persistent type, which servers before 3.9 do not know (see clearServerWatches).
      const ignored = ['NOWATCHER', 'CONNECTIONLOSS', 'CLOSED', 'SESSIONEXPIRED', ...(type >= WatcherType.persistent ? ['MARSHALLINGERROR'] : [])];
      if (!(error instanceof ZooKeeperError) || !ignored.includes(error.code)) throw error;
    }
  }

  /**
   * Sends a read that sets a one-shot watch for `watcher` (without one, a plain read); `build`
   * makes the request, with or without a server watch. Until its reply, or its failure without
   * one, the request counts as in flight for removeWatcher; `kindOf` tells which watch the reply's
   * error code says the server set (none: no watch). A read a persistent watch was to serve is
   * sent again, with a server watch, when that watch's addWatch failed; within the same bounds.
   */
  protected watchedRequest<T>(watchClass: WatchClass, watcher: Watcher | undefined, kindOf: (err: number) => WatchKind | undefined, build: (setWatch: boolean) => RequestSpec<T>): Promise<T> {
    if (!watcher) return this.send(build(false));
    const { path, op, timeout } = build(true);
    const endAt = timeout === undefined ? undefined : performance.now() + timeout;
    const attempt = (left: number | undefined): Promise<T> => {
      const request = this.watches.begin(watchClass, path!, watcher);
      let again: Promise<T> | undefined;
      const end = (kind: WatchKind | undefined): void => {
        // The server watch nobody wants any more, kept for this request: it goes after the request, in order.
        if (this.watches.end(request, kind)) this.removeServerWatch(path!, REMOVE_TYPE[watchClass]).catch(() => undefined);
      };
      const onReply = (err: number): void => {
        end(kindOf(err));
        // At once: removeWatcher must find the watcher in flight all along.
        if (request.resend) again = sendAgain();
      };
      // Its own one `then` below, as send's.
      const reply = this.request({ ...build(!request.clientSide), timeout: left, onReply });
      // Failed without a reply (timeout, abort, connection loss, close): its watcher will never be registered.
      reply.catch(() => end(undefined));
      return reply.then(
        (result) => again ?? result,
        (error: unknown) => {
          if (again) return again;
          throw error;
        },
      );
    };
    const sendAgain = (): Promise<T> => {
      const left = endAt === undefined ? undefined : Math.floor(endAt - performance.now());
      if (left !== undefined && left < 1) return Promise.reject(new ZooKeeperError('TIMEOUT', `no reply within ${timeout} ms`, { op, path }));
      return attempt(left);
    };
    return attempt(timeout);
  }
}

function watchClassesOf(type: unknown, where: Where): readonly WatchClass[] {
  if (type === 'data') return ['data'];
  if (type === 'children') return ['child'];
  if (type === 'any') return WATCH_CLASSES;
  return invalidArgument('type', "'data', 'children' or 'any'", type, where);
}
