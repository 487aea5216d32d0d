/**
 * Read replicas, as the app reports them: `soniq.replication.status()`. A backend that can send the operator's
 * reads (lists, stats, audit, metrics) to a replica implements the optional `replicationStatus()`; every
 * other backend reads and writes one store and reports no replica.
 */

import type { ReplicationStatus, ReplicationStatusMethod } from "../contract/index.js";

export type { ReplicationStatus, ReplicationStatusMethod };

const NO_REPLICA: ReplicationStatus = Object.freeze({ readReplica: false, lagMs: null });

/** The backend's answer, or "no replica" for a backend without the method. */
export function replicationOf(backend: {
  replicationStatus?: ReplicationStatusMethod;
}): Promise<ReplicationStatus> {
  return backend.replicationStatus ? backend.replicationStatus() : Promise.resolve(NO_REPLICA);
}

/** `soniq.replication`: where the operator's reads go. */
export class ReplicationService {
  readonly #backend: { replicationStatus?: ReplicationStatusMethod };

  constructor(backend: { replicationStatus?: ReplicationStatusMethod }) {
    this.#backend = backend;
  }

  /** `{ readReplica, lagMs }`: whether lists, stats, audit and metrics read from a replica, and its lag. */
  status(): Promise<ReplicationStatus> {
    return replicationOf(this.#backend);
  }
}
