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
