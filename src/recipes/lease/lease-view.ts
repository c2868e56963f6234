import type { LockLostReason } from '../support/lock-error.js';

/**
 * What the diagnostics and the lease's own parts read of a held lease, without the Lease class:
 * they are imported by lease.ts, so naming `Lease` there would close an import cycle (see
 * docs/architecture.md, "Import cycles"). A Lease is a LeaseView.
 */
export interface LeaseView {
  /** The lock path (the contenders' parent, or the node itself for the simple lock). */
  readonly lockPath: string;
  /** Our node. */
  readonly node: string;
  readonly fencingToken: bigint;
  /** The session that owns the node. */
  readonly sessionId: bigint;
}

/** A MultiLease as the diagnostics read it. */
export interface MultiLeaseView {
  readonly leases: readonly LeaseView[];
}

/** How a lease's monitor reaches its lease: methods of the lease, keyed by symbols the package does not export, rather than closures made per lease. */
export const nodeRead: unique symbol = Symbol('nodeRead');
export const leaseLost: unique symbol = Symbol('leaseLost');
export const leaseEnded: unique symbol = Symbol('leaseEnded');

/** The lease a LeaseMonitor watches for (see lease-monitor.ts). */
export interface MonitoredLease {
  /** Our node's data, at every read of the watch (a revocable lease reads it, see revocation.ts). */
  [nodeRead](data: Buffer): void;
  /** The lock is, or may be, lost, or the lease was released: said first, before the signal aborts. */
  [leaseLost](reason: LockLostReason, message: string): void;
  /** The lease ended (lost, released or handed over): said once, last. */
  [leaseEnded](): void;
}
