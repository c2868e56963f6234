import type { CallOptions, ZooKeeperClient } from '../../client/index.js';
import { ZooKeeperError, validatePath } from '../../client/index.js';
import { callListener } from '../../client/state/call-listener.js';
import { parseContender } from '../queue/contender-name.js';
import type { OwnerInfo } from '../support/owner-data.js';
import { parseOwner } from '../support/owner-data.js';
import type { LeaseView } from './lease-view.js';
import { LockError } from '../support/lock-error.js';
import { publishRevocation, revocationChannel } from '../diagnostics.js';

/**
 * Curator's revocation protocol (Revoker.attemptRevoke, LockInternals.REVOKE_MESSAGE): whoever
 * wants a lock asks its holder to let go by writing these exact bytes into the holder's contender
 * node; a holder that made its lock revocable watches its own node's data and hears of it. It is
 * a request only: the holder decides whether and when to release.
 */
export const REVOKE_MESSAGE = '__REVOKE__';

/** Kept apart from the exported text: nobody can change the bytes we write and compare with. */
const REVOKE_BYTES = Buffer.from(REVOKE_MESSAGE, 'ascii');

/**
 * Whether a contender node's data is a revocation request: Curator's bytes (which replaced the
 * owner's data), or zklock's owner data marked by requestRevocation.
 */
export function isRevocationRequest(data: Buffer): boolean {
  if (data.equals(REVOKE_BYTES)) return true;
  const owner = parseOwner(data);
  return 'revocationRequested' in owner && owner.revocationRequested === true;
}

/** What inspection and the CLI show as the owner of a node whose owner data Curator's request bytes replaced. */
export const REVOKED_OWNER = '(revocation requested)';

/** Whether Curator's request bytes replaced the owner data (zklock's requests keep it). */
export function ownerReplaced(data: Buffer): boolean {
  return data.equals(REVOKE_BYTES);
}

/** Who a contender is by its node's data: REVOKED_OWNER where Curator's request bytes replaced it. */
export function ownerOf(data: Buffer): OwnerInfo | { id: string } {
  return ownerReplaced(data) ? { id: REVOKED_OWNER } : parseOwner(data);
}

/**
 * Whether the contender whose node holds `data` listens for revocation requests: true or false
 * for zklock's owner data (a revocable lock says so in it), undefined for anyone else's (a
 * Curator holder listens only if made revocable, and its node does not say).
 */
export function listensForRevocation(data: Buffer): boolean | undefined {
  const owner = ownerOf(data);
  return 'pid' in owner ? owner.revocable === true : undefined;
}

/** What a request writes into a node holding `data`: zklock's owner data keeps the owner, marked; anyone else's is replaced by Curator's bytes. */
function requestData(data: Buffer): Buffer {
  const owner = ownerOf(data);
  return 'pid' in owner ? Buffer.from(JSON.stringify({ ...owner, revocationRequested: true })) : REVOKE_BYTES;
}

/** Bad revocation options fail when the lock is made, not at the first request. */
export function checkRevocationOptions(options: { revocable?: boolean; onRevocationRequested?: unknown }, path: string): void {
  const { revocable, onRevocationRequested } = options;
  const where = { path, op: 'lock' };
  if (revocable !== undefined && typeof revocable !== 'boolean') throw new LockError('INVALID_ARGUMENT', `revocable must be a boolean, got ${String(revocable)}`, where);
  if (onRevocationRequested === undefined) return;
  if (typeof onRevocationRequested !== 'function') throw new LockError('INVALID_ARGUMENT', 'onRevocationRequested must be a function', where);
  if (revocable !== true) throw new LockError('INVALID_ARGUMENT', 'onRevocationRequested needs revocable: true (only a revocable lock watches for requests)', where);
}

/**
 * Asks the holder of the contender node `nodePath` to release it, as Curator's
 * Revoker.attemptRevoke does: writes REVOKE_MESSAGE into a node of Curator, kazoo or anyone else.
 * Into a node of zklock's it writes the owner data marked `revocationRequested` instead, so that
 * inspection still shows who holds it (Curator's bytes erased it); a zklock holder hears either.
 * The write is versioned, read again after a concurrent write (a downgrade's marker, another
 * request), so neither is lost. True when written (or already asked); false when the node is gone
 * (released, or its session ended). Nothing that grants a lock trusts node data beyond the
 * downgrade marker, which a zklock node keeps; Curator's bytes over a downgraded node make zklock
 * readers wait for it again, and in a node that goes turn off the release-record fast path for
 * its waiters (contender-queue.ts mayHaveRecorded: they list the queue instead). A holder that
 * is not revocable never hears (see listensForRevocation).
 */
export async function requestRevocation(client: ZooKeeperClient, nodePath: string, options: CallOptions = {}): Promise<boolean> {
  validatePath(nodePath, 'requestRevocation');
  const name = nodePath.slice(nodePath.lastIndexOf('/') + 1);
  if (!parseContender(name)) {
    throw new LockError('INVALID_ARGUMENT', `${nodePath} is not a lock contender node (zklock, Curator or kazoo name): only a contender can be asked to let go`, {
      path: nodePath,
      op: 'requestRevocation',
    });
  }
  // Each BADVERSION means someone else wrote the node meanwhile: progress, bounded by the caller's signal.
  for (;;) {
    try {
      const read = await client.getData(nodePath, options);
      if (isRevocationRequest(read.data)) return true;
      await client.setData(nodePath, requestData(read.data), { ...options, version: read.stat.version });
      return true;
    } catch (error) {
      if (error instanceof ZooKeeperError && error.code === 'NONODE') return false;
      if (error instanceof ZooKeeperError && error.code === 'BADVERSION') continue;
      throw error;
    }
  }
}

/** What a downgrade hands from the write lease's request to the read lease's (see RevocationRequest.handOver). */
export interface PendingRevocation {
  /** A request is on the node, or was before the downgrade's marker replaced it. */
  requested: boolean;
  /** The write lease's callback ran for it: the read lease's does not run again. */
  called: boolean;
}

/**
 * A lease's side of the protocol: fed every read of its node's data (the lease monitor's watch,
 * re-armed on each change), it aborts its signal and calls the callback once, on the first read
 * that is a request, unless ended (released, handed over, lost) before. The callback runs on a
 * later turn of the event loop (setImmediate): the caller of acquire or downgrade has the lease by
 * then, and a callback that releases it cannot hand the caller a released lease.
 */
export class RevocationRequest {
  private controller: AbortController | undefined;
  private requested = false;
  private called = false;
  private ended = false;

  constructor(
    /** The lease asked; its `held` decides whether a request still counts. */
    private readonly lease: LeaseView & { readonly held: boolean },
    /** The user's callback; not called once the lease is no longer held. */
    private readonly callback: (() => void) | undefined,
  ) {}

  /** Made on first look: most leases are never asked. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.requested) this.controller.abort(this.reason());
    }
    return this.controller.signal;
  }

  /** Data read from our node. */
  observe(data: Buffer): void {
    if (isRevocationRequest(data)) this.request(true);
  }

  /** A request handed on by a downgrade: the callback runs unless the write lease's did. */
  inherit(pending: PendingRevocation): void {
    if (pending.requested) this.request(!pending.called);
  }

  private request(call: boolean): void {
    if (this.ended || this.requested || !this.lease.held) return;
    this.requested = true;
    if (revocationChannel.hasSubscribers) publishRevocation(this.lease);
    this.controller?.abort(this.reason());
    const { callback } = this;
    if (!call || !callback) return;
    setImmediate(() => {
      if (this.ended || !this.lease.held) return;
      this.called = true;
      callListener(callback, []);
    });
  }

  /** Nothing fires after the lease ends. */
  end(): void {
    this.ended = true;
  }

  /** Ends it, saying what the next lease on the node inherits. */
  handOver(): PendingRevocation {
    this.end();
    return { requested: this.requested, called: this.called };
  }

  private reason(): LockError {
    return new LockError('REVOCATION_REQUESTED', 'someone asked the holder to release this lock', { path: this.lease.node, op: 'lease' });
  }
}
