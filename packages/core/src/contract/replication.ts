/** The optional `replicationStatus()` of a backend that reads from a replica (see core's replication.ts). */

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

/** The optional backend method behind `soniq.replication.status()`. */
export type ReplicationStatusMethod = () => Promise<ReplicationStatus>;
