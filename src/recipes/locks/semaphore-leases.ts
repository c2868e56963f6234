import type { Op, Stat, WatchEvent, ZooKeeperClient } from '../../client/index.js';
import { MultiError, ZooKeeperError, joinPath } from '../../client/index.js';
import { abandon, giveUp } from '../support/abandon.js';
import { createProtected } from '../queue/protected-create.js';
import { randomUUID } from 'node:crypto';
import { releaseAll } from './multi-lock.js';
import type { Deadline } from '../support/deadline.js';
import { deleteGuaranteed } from '../support/guaranteed-delete.js';
import { Lease } from '../lease/lease.js';
import type { LeaseMonitorOptions, NodeWatch } from '../lease/lease-monitor.js';
import type { Layout } from '../queue/contender-name.js';
import { releaseQuietly } from './mutex.js';
import { ownerData } from '../support/owner-data.js';
import { awaitSession } from '../support/reconnect.js';
import { createMayHaveRun, isTransient } from '../support/transient.js';
import { safetyMargin } from '../lease/lease-monitor.js';
import { proveFresh } from '../lease/session-liveness.js';
import type { AclOptions } from '../support/lock-acl.js';
import { nodeAcl } from '../support/lock-acl.js';

/** What making leases reads of a semaphore's options (SemaphoreOptions has them all). */
export type LeaseMakingOptions = LeaseMonitorOptions & AclOptions & { ownerId?: string };

/**
 * The head of a semaphore's queue making its lease nodes and leaving the queue: in one
 * transaction with its safety proof (takeLeases), or in two steps (createLeases, leaveQueue).
 * Apart from semaphore.ts, which decides when the head may make them (waitForSlots).
 */
export class SemaphoreLeases {
  constructor(
    private readonly client: ZooKeeperClient,
    /** The semaphore's path. */
    private readonly path: string,
    /** Where the lease nodes are: `<path>/leases`, or `<path>` in kazoo's layout. */
    private readonly leasesPath: string,
    private readonly layout: Layout,
    private readonly options: LeaseMakingOptions,
  ) {}
  /**
   * `count` lease nodes and the deletion of our queue node, in one transaction (a multi): one
   * commit where a create and then a delete took two in turn, so the next head starts as soon as
   * our leases exist, and our own hand-out waits for one commit and one read (the Stat a create
   * in a multi does not return, read with the watch our lease's monitor takes over: the read its
   * monitor made at hand-out anyway). Used when our count listed `leases/` and we wait for a
   * slot (acquire); tryAcquire, and a head that found no `leases/`, create and leave in two steps.
   *
   * Why it is as safe as the two steps. The invariant: at most `maxLeases` lease nodes, because
   * only the queue's head creates them (Curator's and kazoo's semaphores too: each creates only
   * while it holds the same queue lock) and holders only delete theirs. In two steps the head
   * counts c leases, creates k (c + k <= maxLeases, nobody else creating meanwhile), then deletes
   * its queue node; the next head becomes head only once that node is gone, so its count comes
   * after our creates and includes them. In one transaction the creates and the delete commit at
   * the same zxid: whoever sees our queue node gone sees our leases, by the same argument. The
   * head is still the head when it commits: the delete of our queue node is part of the
   * transaction, and fails it (nothing applied) if someone else deleted that node first — where
   * the two steps needed a look at the queue lease after the create's reply, and a window
   * between the create and the delete in which an admin's delete went unnoticed.
   * Failures: refused, the transaction applied nothing, so our queue node stands and is deleted
   * as after any turn that made no lease (NONODE on a create: `leases/` went since our count, a
   * reaped container; the two steps make it again). Unknown outcome (connection lost, aborted):
   * both or neither applied; leases found by their protection id are deleted (see abandon) and
   * the queue node too, and we queue again; a lease left over until then is counted as a holder
   * by the next head (a slot lost for a while, never one too many). The session's end takes the
   * queue node and the leases together (all ephemeral). The transaction creates several children
   * of `leases/` in one zxid, never of a queue's parent, so the queue's sole-contender proof
   * (sequence-proof.ts, which counts one create per transaction in the queue's parent) is
   * untouched. Our queue lease is ended with handOver (no request: its watch fired on the
   * transaction's delete), so it leaves no release record (release-record.ts) in `locks/`: a
   * waiter behind then checks its listing instead of taking the record's shortcut.
   */
  async takeLeases(deadline: Deadline, queueLease: Lease, count: number): Promise<Lease[]> {
    const data = ownerData(this.options.ownerId);
    const names = Array.from({ length: count }, () => randomUUID());
    const creates = names.map((uuid): Op => {
      const path = joinPath(this.leasesPath, `_c_${uuid}-lease-`);
      return { op: 'create', path, data, mode: 'EPHEMERAL_SEQUENTIAL', acl: nodeAcl(this.client, this.options.acl, path) };
    });
    const session = queueLease.sessionId;
    let created: string[];
    try {
      // Heard gone before we send (an admin deleted it): the transaction would fail on it anyway.
      if (!queueLease.held || this.client.sessionId !== session) throw sessionLost(this.path);
      const results = await this.client.multi([...creates, { op: 'delete', path: queueLease.node }], { signal: deadline.requestSignal });
      created = results.slice(0, count).map((result) => (result as { path: string }).path);
    } catch (error) {
      if (error instanceof MultiError && error.failedIndex < count && error.code === 'NONODE') {
        // leases/ went (a reaped container) since our count: made again by the two steps.
        try {
          const leases = await this.createLeases(deadline, queueLease, count);
          await this.leaveQueue(deadline, queueLease, leases);
          return leases;
        } catch (failure) {
          await this.leaveQueue(deadline, queueLease, null).catch(() => undefined);
          throw failure;
        }
      }
      if (error instanceof ZooKeeperError && createMayHaveRun(error)) {
        // Applied or not, unknown: leases found by their protection id are given up, and we queue again.
        await Promise.all(names.map((uuid) => abandon(this.client, session, this.leasesPath, () => this.findLease(uuid))));
        await this.leaveQueue(deadline, queueLease, null).catch(() => undefined);
        deadline.check();
        throw sessionLost(this.path);
      }
      // Refused (our queue node went, NOAUTH, ...): nothing was applied, our queue node is left as after any failed turn.
      await this.leaveQueue(deadline, queueLease, null);
      throw error instanceof MultiError && error.failedIndex === count && error.code === 'NONODE' ? sessionLost(this.path) : error;
    }
    // Deleted by our transaction: the queue's lease ends without a request of its own (its watch fired on the delete).
    queueLease.handOver();
    const nodes: { path: string; stat: Stat; watched: NodeWatch }[] = [];
    try {
      // The Stat (the fencing token is its czxid) that a create in a multi does not return, with the watch the lease's monitor takes over.
      for (const [i, watched] of (await Promise.all(created.map((path) => watchCreated(this.client, path, session, deadline)))).entries()) {
        // Deleted already (by an admin): no lease, and we queue again.
        if (!watched.stat) throw sessionLost(this.path);
        nodes.push({ path: created[i]!, stat: watched.stat, watched: watched.watch });
      }
      await proveFresh(this.client, safetyMargin(this.client, this.options), deadline, created[0]!, this.options.acl);
    } catch (error) {
      await giveUp(this.client, Promise.all(created.map((path) => deleteGuaranteed(this.client, path, session))), deadline);
      throw error;
    }
    return nodes.map((node) => new Lease(this.client, this.path, node.path, node.stat, this.options, { watched: node.watched }));
  }

  /** Our lease node named with protection id `uuid`, if it exists (after a transaction whose outcome we never learned). */
  async findLease(uuid: string): Promise<{ path: string } | undefined> {
    const name = (await this.client.getChildren(this.leasesPath)).children.find((child) => child.includes(uuid));
    return name === undefined ? undefined : { path: joinPath(this.leasesPath, name) };
  }

  /**
   * Deletes our queue node, waiting for it no longer than the deadline allows (see giveUp). When
   * that fails, the acquire fails with its error and the leases just made are released first:
   * nobody would hold them.
   */
  async leaveQueue(deadline: Deadline, queueLease: Lease, leases: readonly Lease[] | null): Promise<void> {
    try {
      await giveUp(this.client, releaseQuietly(queueLease), deadline);
    } catch (error) {
      if (leases) await giveUp(this.client, releaseAll(leases), deadline).catch(() => undefined);
      throw error;
    }
  }

  /**
   * `count` lease nodes, created together on the session of our queue node (on another, we would
   * no longer head the queue); if any fails, those made are deleted (see giveUp) before the
   * failure is passed on.
   */
  async createLeases(deadline: Deadline, queueLease: Lease, count: number): Promise<Lease[]> {
    const data = ownerData(this.options.ownerId);
    const name = (): { prefix: string; protectionId: string } => {
      const uuid = randomUUID();
      return { prefix: `_c_${uuid}-lease-`, protectionId: uuid };
    };
    const session = queueLease.sessionId;
    // kazoo's Semaphore lists its path without making it again once it has: a container the server reaped would fail it.
    const container = this.layout !== 'kazoo';
    const results = await Promise.allSettled(Array.from({ length: count }, () => createProtected(this.client, this.leasesPath, name, data, deadline, { session, list: false, container, acl: this.options.acl })));
    const nodes = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    try {
      const failure = results.find((result) => result.status === 'rejected');
      if (failure) throw failure.reason;
      // Our queue node went (an admin deleted it): another head may count a slot for itself too.
      if (!queueLease.held) throw sessionLost(this.path);
      await proveFresh(this.client, safetyMargin(this.client, this.options), deadline, nodes[0]!.path, this.options.acl);
    } catch (error) {
      await giveUp(this.client, Promise.all(nodes.map((node) => deleteGuaranteed(this.client, node.path, node.stat.ephemeralOwner))), deadline);
      throw error;
    }
    return nodes.map((node) => new Lease(this.client, this.path, node.path, node.stat, this.options));
  }
}

/**
 * `path`'s Stat (null when it is gone), read with an exists whose watch a lease's monitor can
 * take over (see NodeWatch): set from this read on, so a deletion after it is heard. Tried
 * again on the same session while the connection is lost, within the deadline.
 */
async function watchCreated(client: ZooKeeperClient, path: string, session: bigint, deadline: Deadline): Promise<{ stat: Stat | null; watch: NodeWatch }> {
  let armed = false;
  let fired = false;
  let adopter: ((event: WatchEvent) => void) | undefined;
  const watcher = (event: WatchEvent): void => {
    armed = false;
    fired = true;
    adopter?.(event);
  };
  const watch: NodeWatch = {
    adopt: (next) => {
      if (!armed) return false;
      adopter = next;
      return true;
    },
  };
  for (;;) {
    deadline.check();
    try {
      const stat = await client.exists(path, { watch: watcher, signal: deadline.requestSignal });
      // On a node already gone the watch waits for its creation, which never comes (its name was unique).
      if (stat === null) client.removeWatcher(path, watcher).catch(() => undefined);
      armed = stat !== null && !fired;
      return { stat, watch };
    } catch (error) {
      if (!isTransient(error)) throw error;
      await awaitSession(client, session, deadline);
    }
  }
}

/** The errors sessionLost made, told apart from a request's SESSIONEXPIRED by tryAcquire. */
export const placeLost = new WeakSet<object>();

/** Our place at the head of the queue went with the session (or an admin): queue again. */
export function sessionLost(path: string): ZooKeeperError {
  const error = new ZooKeeperError('SESSIONEXPIRED', 'the queue node we held is gone', { path, op: 'acquire' });
  placeLost.add(error);
  return error;
}