/**
 * Read replicas, as the app reports them: `soniq.replication()`. A backend that can send the operator's
 * reads (lists, stats, audit, metrics) to a replica implements the optional `replicationStatus()`; every
 * other backend reads and writes one store and reports no replica.
 */

/** Where the operator's reads go, and how far behind that is. */
export interface ReplicationStatus {
  /** True when lists, stats, audit and metrics are read from a replica (writes and workers never are). */
  readonly readReplica: boolean;
  /**
   * How far the replica's data trails the primary, in ms (0 when it has replayed everything it received);
   * null without a replica, or when the replica is not replaying (promoted, or not a standby).
   */
  readonly lagMs: number | null;
}

/** The optional backend method behind `soniq.replication()`. */
export type ReplicationStatusMethod = () => Promise<ReplicationStatus>;

const NO_REPLICA: ReplicationStatus = Object.freeze({ readReplica: false, lagMs: null });

/** The backend's answer, or "no replica" for a backend without the method. */
export function replicationOf(backend: {
  replicationStatus?: ReplicationStatusMethod;
}): Promise<ReplicationStatus> {
  return backend.replicationStatus ? backend.replicationStatus() : Promise.resolve(NO_REPLICA);
}
