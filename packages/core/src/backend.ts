/**
 * The Backend contract: what the worker and the app need from storage, and nothing about SQL.
 * Every backend implements it; `@soniq/testkit` certifies it. Core wraps any backend with
 * `guardBackend` (setup once, typed error after close, idempotent close).
 *
 * Conventions every implementation keeps:
 * - Ids are opaque strings. An id that names no row (including a malformed one) means "not found":
 *   reads return null, writes return false. Never throw for that.
 * - Worker-side writes (`complete`, `retry`, `nack`, `reschedule`, `markJobDeadLetter` with `attempt`)
 *   are fenced by `JobRef`: they apply only while the row is `processing` with the same `attempts`
 *   the claim gave it, so a late write after cancel, recovery or a re-claim is a no-op.
 * - Time comparisons (due jobs, heartbeats, expiry, leases) use the backend's own clock
 *   (the database's `now()` for SQL backends). Relative delays are passed as milliseconds for that reason.
 * - Writing a status outside the four, or changing a done/cancelled job's status, fails with
 *   `SONIQ_INVALID_STATUS_TRANSITION` and changes nothing (the SQL backends' storage enforces it too).
 */

import type { JobStatus } from "./schema/constants.js";
import type { DeadLetterJob, Job, QueueStats, WorkerInfo } from "./types.js";

export interface BackendCapabilities {
  /** Wake-ups reach workers in other processes (Postgres LISTEN/NOTIFY). Without it core polls. */
  readonly notify: boolean;
  /** `enqueue`/`enqueueMany` accept `tx` and write inside the caller's transaction. */
  readonly transactionalEnqueue: boolean;
  /** Leases are enforced across processes by the database (advisory locks or lease rows). */
  readonly advisoryLocks: boolean;
  /** Several processes can share this backend's storage (false for memory). */
  readonly multiProcess: boolean;
}

/** A job to insert. Core fills every field; backends do not apply defaults of their own. */
export interface NewJob {
  /** Fresh UUID chosen by core. On a dedup hit the existing row's id is returned instead. */
  id: string;
  jobName: string;
  /** Already validated as JSON by core. */
  args: unknown;
  /** Canonical hash of args, set when `unique` is true. */
  argsHash: string | null;
  queue: string;
  priority: number;
  maxAttempts: number;
  /** When the job becomes due. `null` means now, by the backend's clock. */
  scheduledAt: Date | null;
  /** While a queued job with this key exists, enqueueing the same key returns that job. */
  dedupKey: string | null;
  /** While a queued job with the same name and `argsHash` exists, enqueue returns that job. */
  unique: boolean;
  producerId: string | null;
}

export interface EnqueueResult {
  id: string;
  /** True when an existing queued job (same `dedupKey`, or same name+args for unique jobs) was returned. */
  deduplicated: boolean;
}

export interface EnqueueOptions<TTx = unknown> {
  /** Run the insert inside the caller's transaction (only with `capabilities.transactionalEnqueue`). */
  tx?: TTx;
}

export interface ClaimRequest {
  /** Queues to take from; `null` means every queue. An empty array claims nothing. */
  queues: readonly string[] | null;
  /** Most jobs to return (>= 1). */
  limit: number;
  /** Registered worker id stamped on the rows, or null (e.g. `runOnce`). */
  workerId: string | null;
}

/** Fences a worker-side write to the run that claimed the job. */
export interface JobRef {
  id: string;
  /** The job's `attempts` as returned by the claim. */
  attempt: number;
}

export interface CompleteItem extends JobRef {
  result: unknown;
  /** How long the done row is kept. 0 deletes the row at completion. */
  resultTtlMs: number;
}

export interface RetryOptions {
  error: string;
  /** Delay from now (backend clock) before the job is due again. */
  delayMs: number;
}

export interface NackOptions {
  /**
   * Give back the attempt the claim counted (attempts - 1): for a job claimed but never started, e.g.
   * released at graceful shutdown. Default false: the run counted (e.g. aborted at the shutdown timeout).
   */
  refundAttempt?: boolean;
}

export interface RescheduleOptions {
  delayMs: number;
  /** Stored as `last_error = "SNOOZE: <reason>"` (or `"SNOOZE"`). */
  reason?: string | null;
}

export interface DeadLetterOptions {
  reason: string;
  error: string | null;
  tags?: Record<string, unknown> | null;
  /** When given, the move is fenced like other worker writes (row processing with these attempts). */
  attempt?: number;
}

/** One worker-side dead-letter move for `markJobsDeadLetter`: fenced like `markJobDeadLetter` with `attempt`. */
export interface DeadLetterItem extends JobRef {
  reason: string;
  error: string | null;
  tags?: Record<string, unknown> | null;
}

export interface ListJobsFilter {
  status?: JobStatus | readonly JobStatus[];
  queue?: string;
  jobName?: string;
  /** Default 100, at most 1000. */
  limit?: number;
  offset?: number;
}

export interface DeadLetterFilter {
  jobName?: string;
  queue?: string;
  reason?: string;
  /** Moved at or after this instant. */
  since?: Date;
  /** Moved before this instant. */
  until?: Date;
  /** Default 100, at most 1000. */
  limit?: number;
  offset?: number;
}

export interface ReplayOptions {
  /** Fresh UUID for the new job, chosen by core. */
  newId: string;
  queue?: string;
  priority?: number;
  scheduledAt?: Date | null;
}

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
  /** Workers whose heartbeat was older than the threshold; now `stopped`. */
  workerIds: string[];
  /** Their processing jobs, now queued again with attempts unchanged. */
  requeuedJobIds: string[];
}

export interface MigrationStatus {
  applied: string[];
  pending: string[];
}

export interface MigrationReport extends MigrationStatus {
  /** Migrations this call applied (empty when already up to date). */
  appliedNow: string[];
}

/** Called with the queue name of a job that became available. A hint: polling stays the fallback. */
export type WakeUpListener = (queue: string) => void;

export interface Backend<TTx = never> {
  readonly name: string;
  readonly capabilities: BackendCapabilities;

  /** Create or upgrade the schema. Idempotent; safe when several processes run it at once. */
  migrate(): Promise<MigrationReport>;
  migrationStatus(): Promise<MigrationStatus>;

  enqueue(job: NewJob, options?: EnqueueOptions<TTx>): Promise<EnqueueResult>;
  /** All or nothing, one round trip where the storage allows; results in input order. */
  enqueueMany(jobs: readonly NewJob[], options?: EnqueueOptions<TTx>): Promise<EnqueueResult[]>;

  /**
   * Take up to `limit` due queued jobs in priority, scheduled_at, created_at order; mark them processing,
   * attempts + 1, worker id stamped. A job whose attempts would exceed max_attempts is moved to the
   * dead-letter table (reason `max_retries_exceeded`) instead of being returned.
   */
  claim(request: ClaimRequest): Promise<Job[]>;

  /** Mark processing jobs done (or delete them when `resultTtlMs` is 0). Returns how many applied. */
  complete(items: readonly CompleteItem[]): Promise<number>;
  /** Back to queued after a failed attempt: last_error set, due after `delayMs`. */
  retry(ref: JobRef, options: RetryOptions): Promise<boolean>;
  /**
   * Give a claimed job back: queued, due now, worker_id cleared, last_error unchanged; attempts unchanged,
   * or attempts - 1 with `refundAttempt`. Fenced like other worker writes, so a second call is a no-op.
   */
  nack(ref: JobRef, options?: NackOptions): Promise<boolean>;
  /** Snooze: queued after `delayMs` without spending an attempt (attempts - 1). */
  reschedule(ref: JobRef, options: RescheduleOptions): Promise<boolean>;
  /**
   * Move a queued or processing job to the dead-letter table in one transaction: the row is in exactly
   * one table at every consistent read. Returns false when there is no such movable job.
   * Throws `SONIQ_DEAD_LETTER_CONFLICT` (nothing changed) when a dead-letter row with the id exists.
   */
  markJobDeadLetter(id: string, options: DeadLetterOptions): Promise<boolean>;
  /**
   * Optional (additive): several worker-side moves in one round trip, each atomic and fenced like
   * `markJobDeadLetter` with `attempt`. An item that cannot move (not processing under that attempt, or a
   * dead-letter row with its id already exists) is skipped and changes nothing; the others move. Returns
   * the ids that moved. When absent, core calls `markJobDeadLetter` once per job.
   * It stays optional so backends written against the earlier contract keep working: every backend in
   * this repository implements it, and the testkit's `dlq/batch-move-*` cases certify it where present.
   */
  markJobsDeadLetter?(items: readonly DeadLetterItem[]): Promise<string[]>;
  /** Cancel a queued or processing job. False when it is missing or already terminal. */
  cancel(id: string): Promise<boolean>;

  getJob(id: string): Promise<Job | null>;
  /** Newest first (created_at descending). */
  listJobs(filter?: ListJobsFilter): Promise<Job[]>;
  getQueueStats(filter?: { queue?: string }): Promise<QueueStats>;

  /** Newest first (moved_to_dead_letter_at descending). */
  listDeadLetterJobs(filter?: DeadLetterFilter): Promise<DeadLetterJob[]>;
  getDeadLetterJob(id: string): Promise<DeadLetterJob | null>;
  /**
   * In one transaction: insert a queued job (new id, attempts 0, same name/args/max_attempts) and bump the
   * dead-letter row's resurrection_count and last_resurrection_at. Returns the new id, or null if no row.
   */
  replayDeadLetterJob(id: string, options: ReplayOptions): Promise<string | null>;
  /** Delete a dead-letter row. False when there was none. */
  purgeDeadLetterJob(id: string): Promise<boolean>;

  registerWorker(worker: WorkerRegistration): Promise<void>;
  /** False when the worker row is gone or was marked stopped (e.g. declared stale by a peer). */
  heartbeat(workerId: string, metadata?: Record<string, unknown> | null): Promise<boolean>;
  stopWorker(workerId: string): Promise<void>;
  listWorkers(): Promise<WorkerInfo[]>;
  /** Mark workers with heartbeats older than `staleAfterMs` stopped and requeue their processing jobs. */
  recoverStaleWorkers(staleAfterMs: number): Promise<StaleRecovery>;
  /** Delete done rows whose result TTL has passed. Returns how many. */
  deleteExpiredJobs(): Promise<number>;

  /** Observability only: which task names a worker serves. */
  registerTaskNames(workerId: string, names: readonly string[]): Promise<void>;
  listTaskNames(): Promise<{ taskName: string; workerId: string; lastSeenAt: Date }[]>;

  /** Subscribe to wake-ups; resolves once listening. The returned function unsubscribes. */
  subscribe(listener: WakeUpListener): Promise<() => Promise<void>>;

  /**
   * Acquire or renew the named lease for `holder` for `ttlMs`. True when `holder` holds it now.
   * Used for leader election (scheduler, maintenance).
   */
  tryAcquireLease(name: string, holder: string, ttlMs: number): Promise<boolean>;
  releaseLease(name: string, holder: string): Promise<void>;

  /** Release what the backend owns (never a pool or database handed to it). */
  close(): Promise<void>;
}

/** The transaction handle type a backend accepts. */
export type BackendTx<B> = B extends Backend<infer T> ? T : never;
