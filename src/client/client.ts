import { performance } from 'node:perf_hooks';
import type {
  ACL,
  AclStat,
  ChildrenStat,
  MultiReadOp,
  PathStat,
  Reader,
  Stat,
  Writer,
} from '../protocol/index.js';
import {
  OpCode,
  ZK_ERROR,
  ZooKeeperError,
  createOpCode,
  readAclStat,
  readChildren2,
  readCreate2,
  readMultiResults,
  readStat,
  writeCreate,
  writeMulti,
  writeMultiRead,
  writePath,
  writePathVersion,
  writePathWatch,
  writeSetACL,
  writeSetData,
} from '../protocol/index.js';
import type { AclProvider } from './acl.js';
import { aclOf } from './acl.js';
import type { CreateMode } from './create-mode.js';
import type { NodeData } from './node-data.js';
import { ancestry, validatePath } from './paths.js';
import type { Op, OpResult } from './transaction.js';
import { toMultiOps, toOpResults } from './transaction.js';
import { CONFIG_NODE } from './watches/config-watch.js';
import type { EnsembleConfig, ReconfigSpec } from './ensemble-config.js';
import { readReconfigResult, reconfigWriter } from './ensemble-config.js';
import {
  checkAcl,
  checkBoolean,
  checkBounds,
  checkCreateMode,
  checkCreatePath,
  checkData,
  checkFunction,
  checkMultiReadOp,
  checkOps,
  checkOptions,
  checkVersion,
} from './validate.js';
import type { WatchKind } from './watches/watch-manager.js';
import type {
  CallOptions,
  ClientIdentity,
  ClientOptions,
  CreateOptions,
  DataResult,
  MultiReadResult,
  VersionOptions,
  WatchOptions,
} from './client-options.js';
import { EMPTY, at, callBounds, operation } from './client-session.js';
import { ClientWatches } from './watched-requests.js';

export type {
  CallOptions,
  ClientIdentity,
  ClientOptions,
  ClientState,
  CreateOptions,
  DataResult,
  MultiReadResult,
  OneShotWatchType,
  VersionOptions,
  WaitForConnectedOptions,
  WatchOptions,
} from './client-options.js';

/** ensurePath gives up when parents it saw vanish this often: someone deletes them as fast as it creates. */
const MAX_VANISHED_PARENTS = 10;

/**
 * A ZooKeeper client: one session, kept across reconnects. Every method validates its input
 * before sending and rejects with a {@link ZooKeeperError}. Its events are {@link ClientEvents}.
 */
export class ZooKeeperClient extends ClientWatches {
  /**
   * Creates a client and waits until its session is established and the server accepted the
   * `auth` credentials (bounded by `timeout`, default the request timeout). Rejects with AUTHFAILED,
   * the client closed, when the server refuses them. A TIMEOUT has the last connection failure as
   * its `cause`: refused, DNS, TLS.
   */
  static async connect(connectString: string, options: ClientOptions & CallOptions = {}): Promise<ZooKeeperClient> {
    const client = new ZooKeeperClient(connectString, options);
    try {
      await client.waitForConnected({ signal: options.signal, timeout: options.timeout });
      return client;
    } catch (error) {
      await client.close();
      throw error;
    }
  }

  /** The ACL a create of `path` without an explicit `acl` gets: the `defaultAcl` option's. */
  aclFor(path: string): readonly ACL[] {
    return checkAcl(aclOf(this.defaultAcl, path), at('create', path), 'defaultAcl');
  }

  // ---- operations ----

  create(path: string, data?: NodeData, options?: CreateOptions): Promise<PathStat> {
    return operation(() => {
      const where = at('create', path);
      const o = checkOptions(options, where);
      const { flags, ttl } = checkCreateMode(o.mode, o.ttl, where);
      checkCreatePath(path, flags, 'create');
      const body = { path: this.chrootMap.toServer(path), data: checkData(data, where), acl: o.acl === undefined ? this.aclFor(path) : checkAcl(o.acl, where), flags, ttl };
      const spec = { type: createOpCode(flags), op: 'create', path, write: (w: Writer) => writeCreate(w, body), read: readCreate2, ...checkBounds(o, where) };
      return this.send(spec, (result) => ({ path: this.userPath(result.path), stat: result.stat }));
    });
  }

  delete(path: string, options?: VersionOptions): Promise<void> {
    return operation(() => {
      const server = this.serverPath(path, 'delete');
      const where = at('delete', path);
      const o = checkOptions(options, where);
      const version = checkVersion(o.version, where);
      return this.send<void>({ type: OpCode.delete, op: 'delete', path, write: (w) => writePathVersion(w, server, version), ...checkBounds(o, where) });
    });
  }

  /** The node's Stat, or null when it does not exist. A watch fires on creation, change or deletion. */
  exists(path: string, options?: WatchOptions): Promise<Stat | null> {
    return operation(() => {
      const server = this.serverPath(path, 'exists');
      const where = at('exists', path);
      const o = checkOptions(options, where);
      const watch = checkFunction(o.watch, 'watch', where);
      const spec = checkBounds(o, where);
      // The session answers NONODE with null, building no error to catch.
      return this.watchedRequest<Stat | null>('data', watch, existsWatchKind, (setWatch) => ({
        type: OpCode.exists,
        op: 'exists',
        path,
        write: (w) => writePathWatch(w, server, setWatch),
        read: readStat,
        ...spec,
      }));
    });
  }

  getData(path: string, options?: WatchOptions): Promise<DataResult> {
    return this.readData('getData', path, options);
  }

  setData(path: string, data: NodeData, options?: VersionOptions): Promise<Stat> {
    return operation(() => {
      const server = this.serverPath(path, 'setData');
      const where = at('setData', path);
      const o = checkOptions(options, where);
      const bytes = checkData(data, where);
      const version = checkVersion(o.version, where);
      return this.send({
        type: OpCode.setData,
        op: 'setData',
        path,
        write: (w) => writeSetData(w, server, bytes, version),
        read: readStat,
        ...checkBounds(o, where),
      });
    });
  }

  /** Children names (unsorted, as the server lists them) and the parent's Stat. */
  getChildren(path: string, options?: WatchOptions): Promise<ChildrenStat> {
    return operation(() => {
      const server = this.serverPath(path, 'getChildren');
      const where = at('getChildren', path);
      const o = checkOptions(options, where);
      const watch = checkFunction(o.watch, 'watch', where);
      const spec = checkBounds(o, where);
      return this.watchedRequest('child', watch, (err) => (err === 0 ? 'child' : undefined), (setWatch) => ({
        type: OpCode.getChildren2,
        op: 'getChildren',
        path,
        write: (w) => writePathWatch(w, server, setWatch),
        read: readChildren2,
        ...spec,
      }));
    });
  }

  getACL(path: string, options?: CallOptions): Promise<AclStat> {
    return operation(() => {
      const server = this.serverPath(path, 'getACL');
      return this.send({ type: OpCode.getACL, op: 'getACL', path, write: (w) => writePath(w, server), read: readAclStat, ...callBounds(options, at('getACL', path)) });
    });
  }

  setACL(path: string, acl: readonly ACL[], options?: VersionOptions): Promise<Stat> {
    return operation(() => {
      const server = this.serverPath(path, 'setACL');
      const where = at('setACL', path);
      const o = checkOptions(options, where);
      // Required here: a missing list is no "default ACL" to set.
      const entries = checkAcl(acl ?? null, where);
      const version = checkVersion(o.version, where);
      return this.send({
        type: OpCode.setACL,
        op: 'setACL',
        path,
        write: (w) => writeSetACL(w, server, entries, version),
        read: readStat,
        ...checkBounds(o, where),
      });
    });
  }

  /** Waits until the server this session uses has caught up with the leader (for reads after another client's write). */
  sync(path = '/', options?: CallOptions): Promise<void> {
    return operation(() => {
      const server = this.serverPath(path, 'sync');
      // The reply's path is read past, not returned.
      return this.send<void>({ type: OpCode.sync, op: 'sync', path, write: (w) => writePath(w, server), read: (r) => void r.string(), ...callBounds(options, at('sync', path)) });
    });
  }

  /** Runs ops atomically: all apply or none. A failure throws a MultiError naming the failing op. */
  multi(ops: readonly Op[], options?: CallOptions): Promise<OpResult[]> {
    return operation(() => {
      const multiOps = toMultiOps(ops, this.chrootMap, (path) => this.aclFor(path));
      const spec = { type: OpCode.multi, op: 'multi', write: (w: Writer) => writeMulti(w, multiOps), read: readMultiResults, ...callBounds(options, { op: 'multi' }) };
      return this.send(spec, (raw) => toOpResults(ops, raw, this.chrootMap));
    });
  }

  /** Several reads in one round trip; each result is the value or the error of that read. */
  multiRead(ops: readonly MultiReadOp[], options?: CallOptions): Promise<MultiReadResult[]> {
    return operation(() => {
      const where = { op: 'multiRead' };
      const serverOps = (checkOps(ops, where, false) as readonly MultiReadOp[]).map((op, i) => {
        const read = checkMultiReadOp(op, i);
        return { type: read.type, path: this.chrootMap.toServer(read.path) };
      });
      const spec = { type: OpCode.multiRead, op: 'multiRead', write: (w: Writer) => writeMultiRead(w, serverOps), read: readMultiResults, ...callBounds(options, where) };
      return this.send(spec, (raw) =>
        raw.map((r, i): MultiReadResult => {
          if (r.type === OpCode.error || r.err !== 0) return ZooKeeperError.fromServer(r.err, 'multiRead', ops[i]?.path);
          return r.type === OpCode.getData ? { op: 'getData', data: r.data ?? EMPTY, stat: r.stat! } : { op: 'getChildren', children: r.children ?? [] };
        }),
      );
    });
  }

  /**
   * Changes the ensemble's membership (ZooKeeperAdmin.reconfigure; opcode 16, a 3.5+ server with
   * `reconfigEnabled=true`, else RECONFIGDISABLED): `joining` lines and `leaving` ids, or a whole
   * new `members` list; `fromConfig` makes it conditional (BADVERSION). Needs WRITE on
   * /zookeeper/config, which only a super user has unless the server runs with skipACL. Resolves
   * with the configuration the ensemble committed.
   */
  reconfig(spec: ReconfigSpec, options?: CallOptions): Promise<{ config: EnsembleConfig; stat: Stat }> {
    return operation(() => {
      const where = { op: 'reconfig', path: CONFIG_NODE };
      const write = reconfigWriter(spec, where);
      return this.send({ type: OpCode.reconfig, op: 'reconfig', path: CONFIG_NODE, write, read: readReconfigResult, ...callBounds(options, where) });
    });
  }

  /** The identities the server knows this session by (`ip`, and those added with addAuth). A 3.7+ server; an older one answers UNIMPLEMENTED. */
  whoAmI(options?: CallOptions): Promise<ClientIdentity[]> {
    return operation(() => this.send({ type: OpCode.whoAmI, op: 'whoAmI', read: readClientInfos, ...callBounds(options, { op: 'whoAmI' }) }));
  }

  /** The session's ephemeral nodes under `prefix`. */
  getEphemerals(prefix = '/', options?: CallOptions): Promise<string[]> {
    return operation(() => {
      const server = this.serverPath(prefix, 'getEphemerals');
      const spec = callBounds(options, at('getEphemerals', prefix));
      const request = { type: OpCode.getEphemerals, op: 'getEphemerals', path: prefix, write: (w: Writer) => writePath(w, server), read: (r: Reader) => r.strings(), ...spec };
      return this.send(request, (paths) => paths.flatMap((p) => this.chrootMap.fromServer(p) ?? []));
    });
  }

  /** The number of all descendants of `path`. */
  getAllChildrenNumber(path: string, options?: CallOptions): Promise<number> {
    return operation(() => {
      const server = this.serverPath(path, 'getAllChildrenNumber');
      const spec = callBounds(options, at('getAllChildrenNumber', path));
      return this.send({ type: OpCode.getAllChildrenNumber, op: 'getAllChildrenNumber', path, write: (w) => writePath(w, server), read: (r) => r.int(), ...spec });
    });
  }

  /**
   * Creates `path` and any missing parents (as containers with `container: true`, which the server
   * deletes once empty). Existing nodes are left as they are. `timeout` and `signal` bound the
   * whole walk. A missing chroot fails at once with CHROOT_MISSING: nothing can be created in it
   * (`ensurePath('/')` asks the server about the chroot: one request, none without a chroot).
   * `acl` (a list, or a function of each node's path) is that of every node it creates; default `defaultAcl`.
   */
  async ensurePath(path: string, options?: CallOptions & { container?: boolean; acl?: AclProvider }): Promise<void> {
    validatePath(path, 'ensurePath');
    const where = at('ensurePath', path);
    const o = checkOptions(options, where);
    const { signal, timeout } = checkBounds(o, where);
    // A function is asked for each node it creates (its answer checked by create).
    const acl = o.acl === undefined || typeof o.acl === 'function' ? o.acl : checkAcl(o.acl, where);
    if (path === '/') {
      // The root always exists, but a chroot may not: a caller told "ensured" would create under
      // it, be refused with NONODE, and ensure again for ever (a SimpleLock on a top-level path).
      if (this.chrootMap.prefix && !(await this.exists('/', { signal, timeout }))) throw this.missingRoot(path);
      return;
    }
    const mode: CreateMode = checkBoolean(o.container, 'container', where) ? 'CONTAINER' : 'PERSISTENT';
    const endAt = timeout === undefined ? undefined : performance.now() + timeout;
    const chain = ancestry(path);
    // Each create either moves one level down (done, or it exists) or one level up (its parent is
    // missing); up only past what this walk saw exist when someone deletes it meanwhile, counted.
    let level = chain.length - 1;
    let parentSeen = false;
    let vanished = 0;
    while (level < chain.length) {
      const remaining = endAt === undefined ? undefined : endAt - performance.now();
      if (remaining !== undefined && remaining < 1) throw new ZooKeeperError('TIMEOUT', `not ensured within ${timeout} ms`, { op: 'ensurePath', path });
      const node = chain[level]!;
      try {
        await this.create(node, EMPTY, { mode, acl: acl && aclOf(acl, node), signal, timeout: remaining });
      } catch (error) {
        if (!(error instanceof ZooKeeperError) || (error.code !== 'NODEEXISTS' && error.code !== 'NONODE')) throw error;
        if (error.code === 'NONODE') {
          if (level === 0) throw this.missingRoot(path);
          if (parentSeen && ++vanished > MAX_VANISHED_PARENTS) {
            throw new ZooKeeperError('NONODE', `parents were deleted ${vanished} times while being created`, { op: 'ensurePath', path });
          }
          parentSeen = false;
          level--;
          continue;
        }
      }
      parentSeen = true;
      level++;
    }
  }

  /** A top-level node cannot be created: only a missing chroot explains that ('/' always exists). */
  private missingRoot(path: string): ZooKeeperError {
    const chroot = this.chrootMap.prefix;
    const message = chroot
      ? `the chroot ${chroot} of the connect string does not exist: create it (connected without the chroot) or fix the connect string`
      : 'the server reports the root missing';
    return new ZooKeeperError(chroot ? 'CHROOT_MISSING' : 'NONODE', message, { zkCode: ZK_ERROR.NONODE, op: 'ensurePath', path });
  }
}

/** exists sets a watch whether or not the node exists: on a missing one it waits for the creation. */
function existsWatchKind(err: number): WatchKind | undefined {
  return err === 0 ? 'data' : err === ZK_ERROR.NONODE ? 'exist' : undefined;
}

/** whoAmI's reply: a vector of ClientInfo {authScheme, user}. */
function readClientInfos(r: Reader): ClientIdentity[] {
  const count = r.int();
  const identities: ClientIdentity[] = [];
  for (let i = 0; i < count; i++) identities.push({ scheme: r.string(), user: r.string() });
  return identities;
}
