/** The `workers` facet: registration, heartbeats, stale recovery and the task-name registry. */

import type { WorkerInfo } from "../types.js";

export interface WorkerRegistration {
  id: string;
  hostname: string;
  pid: number;
  /** Empty means all queues. */
  queues: readonly string[];
  concurrency: number;
  version: string | null;
  metadata: Record<string, unknown> | null;
}

export interface StaleRecovery {
  /** Active workers whose heartbeat was older than the threshold; now `stopped`. */
  workerIds: string[];
  /**
   * Jobs that were processing under a worker that is now stopped (just now or earlier) or gone; now
   * queued again, attempts unchanged, `worker_id` cleared.
   */
  requeuedJobIds: string[];
}

export interface TaskNameRow {
  taskName: string;
  workerId: string;
  lastSeenAt: Date;
}

export interface WorkersFacet {
  /** Insert or replace the worker row as `active` with a fresh heartbeat. */
  register(worker: WorkerRegistration): Promise<void>;
  /** Move the heartbeat to now. False when the row is gone or not `active` (e.g. declared stale). */
  heartbeat(workerId: string, metadata: Record<string, unknown> | null): Promise<boolean>;
  /** Mark the worker `stopped`. */
  stop(workerId: string): Promise<void>;
  list(): Promise<WorkerInfo[]>;
  recoverStale(staleAfterMs: number): Promise<StaleRecovery>;
  /** Observability only: which task names a worker serves. */
  registerTaskNames(workerId: string, names: readonly string[]): Promise<void>;
  listTaskNames(): Promise<TaskNameRow[]>;
}
