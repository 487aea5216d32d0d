/** The `workers` facet: registration, heartbeats, stale recovery and the task-name registry. */

import type { WorkerInfo } from "../common/types.js";

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

/** A job processing under a worker: its id and the attempts its claim gave it. */
export interface ProcessingJob {
  id: string;
  attempts: number;
}

export interface TaskNameRow {
  taskName: string;
  workerId: string;
  lastSeenAt: Date;
  /** The version of the job's arguments the worker's handler takes (DESIGN.md section 20); null: unversioned. */
  version: number | null;
}

/** A job a worker serves, and the version of its arguments (null: the definition sets none). */
export interface TaskRegistration {
  name: string;
  version: number | null;
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
  /**
   * The jobs processing under this worker (any order; read on the primary). Core's worker compares them with
   * the jobs it holds and gives back those it does not hold: a claim whose result never reached it (the
   * connection dropped after the commit) or an outcome a database crash or failover lost. Without that, such a
   * row would stay processing as long as the worker lives.
   */
  processing(workerId: string): Promise<ProcessingJob[]>;
  /**
   * Which jobs a worker serves, with the version of their arguments its handlers take: operators' tools read it
   * (explain's `no_handler_for_job` and `newer_version`, a replay's check that something runs the job).
   */
  registerTaskNames(workerId: string, tasks: readonly TaskRegistration[]): Promise<void>;
  listTaskNames(): Promise<TaskNameRow[]>;
}
