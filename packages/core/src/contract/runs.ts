/** The `runs` facet: what a worker does with jobs (claim a batch, settle outcomes). */

import type { Job } from "../common/types.js";
import type { DeadLetterReason } from "../schema/constants.js";
import type { FlowSettlement } from "./flows.js";
import type { NewWebhookDelivery } from "./webhooks.js";

export interface ClaimRequest {
  /** Queues to take from; `null` means every queue. Never empty (core claims nothing without calling). */
  queues: readonly string[] | null;
  /** Most jobs to return (>= 1). */
  limit: number;
  /**
   * The registered worker's id, stamped on the rows: recovery requeues a job whose worker is stale,
   * stopped or has no row. Core always passes one (`runOnce` included); null leaves the job without an
   * owner that recovery reaches, so it is for backend tests only.
   */
  workerId: string | null;
  /**
   * Most jobs to take from limited queues (a concurrency, group concurrency or rate limit) in all, 0 to
   * `limit`; omitted means `limit`. A claimed job counts as processing and as a start, so the worker asks
   * limited queues for no more than it can start now: one waiting in its buffer would hold a slot (or a start
   * of the rate window) another worker could use, and start later than its window recorded.
   */
  limitedMax?: number;
}

/**
 * Why a claim came back short although due jobs remain: a queue limit held them back (its concurrency,
 * a group's cap or the rate window is full, or `limitedMax` was reached).
 */
export interface ClaimCap {
  /**
   * Set when a rate window held jobs back: milliseconds until it allows the next start (at least 1).
   * Null when only capacity did, which frees as processing jobs settle.
   */
  retryInMs: number | null;
}

export interface ClaimResult {
  /** The jobs taken, in claim order: every one, including one past its `maxAttempts`. */
  jobs: Job[];
  /**
   * Non-null when fewer than `limit` jobs came back while a limited queue still has due jobs the claim did
   * not take. Null when a short result means nothing more is due (or the result is full). Core waits for a
   * wake-up or the poll after a short uncapped claim, and claims again as its jobs settle (or when the rate
   * window allows) after a capped one.
   */
  capped: ClaimCap | null;
}

/** Fences a worker-side write to the run that claimed the job. */
export interface JobRef {
  id: string;
  /** The job's `attempts` as returned by the claim. */
  attempt: number;
  /**
   * Webhook deliveries of the events this outcome makes (`job.completed`, `job.failed`, ...): written in
   * the same transaction as the item, and only when it applies. Absent or empty on the hot path.
   */
  deliveries?: readonly NewWebhookDelivery[];
}

/** The run succeeded: `done` with its result, kept `resultTtlMs` (0 deletes the row now). */
export interface DoneSettlement extends JobRef {
  kind: "done";
  result: unknown;
  resultTtlMs: number;
  /**
   * Set for a flow step's job only: in the same transaction, mark the step done, write `add`'s steps and
   * release the dependents whose last parent this was. Absent: no flow work, no extra statement.
   */
  flow?: FlowSettlement;
}

/**
 * Back to `queued`, due after `delayMs`, `worker_id` cleared, `attempts` set to the value core computed
 * (retry and nack keep the attempt; snooze and a shutdown release give it back), and `last_error` set to
 * `lastError` when it is a string, unchanged when it is null.
 */
export interface RequeueSettlement extends JobRef {
  kind: "requeue";
  /** Why (for logs and tests; backends store nothing of it). */
  cause: "retry" | "snooze" | "nack";
  attempts: number;
  delayMs: number;
  lastError: string | null;
}

/**
 * Move the row to `soniq_dead_letter_jobs` atomically (the job is in exactly one table at every consistent
 * read). Not applied when a dead-letter row with the id already exists (nothing changes for that item).
 */
export interface DeadLetterSettlement extends JobRef {
  kind: "dead_letter";
  reason: DeadLetterReason;
  error: string | null;
  tags: Record<string, unknown> | null;
  /** Set for a flow step's job only: the step becomes `dead_lettered` and its dependents follow their policy. */
  flow?: FlowSettlement;
}

/**
 * A handler's latest `ctx.progress(value)` for one run, fenced by (id, attempt), and by the worker when the
 * call names one, but not by status: the value is written while the row still carries that attempt (and that
 * worker's claim), even when the run has just settled (done or cancelled: the row keeps its worker), so the
 * last value reported before the end lands with the next write.
 */
export interface ProgressUpdate extends JobRef {
  /** Already checked by core: JSON, at most `MAX_PROGRESS_BYTES` serialized. */
  value: unknown;
}

export type Settlement = DoneSettlement | RequeueSettlement | DeadLetterSettlement;

export interface RunsFacet {
  /**
   * Take up to `limit` due queued jobs in priority, scheduled_at, created_at order, leaving out paused
   * queues and taking from limited ones only what their limits allow (and `limitedMax` in all); mark them
   * processing, attempts + 1, worker id stamped; return them in that order. Returns every job it took,
   * including one whose attempts now exceed `max_attempts` (core dead-letters those). A result shorter than
   * `limit` means nothing more is due, unless `capped` says a limit held due jobs back.
   *
   * A claim covering a limited queue follows core's rule (exported from `@soniq/core/backend`): the backend
   * splits the queues with `claimQueues` and runs core's limited claim (`runLimitedClaimSync` or
   * `runLimitedClaimAsync`) over a `LimitedClaimStore` of its own, which locks the limited queues (where
   * other processes claim), reads their usage and first claimable jobs and the open queues' first due jobs,
   * and takes what core chose. The limits are enforced by that read-and-write, race-free across processes;
   * which jobs, in which order, and `capped` are core's.
   */
  claim(request: ClaimRequest): Promise<ClaimResult>;
  /**
   * Write any mix of outcomes in one call: one statement (Postgres), one IMMEDIATE transaction (SQLite),
   * one synchronous step (memory). Each item is fenced by (id, attempt): it applies only while the row is
   * processing with the attempts the claim gave it. With `workerId` (core's workers always pass their own),
   * the row must also be claimed by that worker: a run whose claim was lost (Postgres claims commit
   * asynchronously, so a database crash or a failover can lose the last ones) keeps running, and the job's
   * next claim, by any worker, carries the same attempt; the worker fence keeps the lost run's late outcome
   * off that claim. Returns, in input order, whether each item applied. Rejects only when the call as a
   * whole failed (then nothing changed).
   */
  settle(items: readonly Settlement[], workerId?: string): Promise<boolean[]>;
  /**
   * Store each run's latest progress (`soniq_jobs.progress`) in one write (one statement, one transaction,
   * one synchronous step), each fenced by (id, attempt). With `workerId` (core's workers always pass their
   * own), the row must also carry that worker's claim, as for `settle`: a run whose claim was lost keeps
   * reporting, and its values must not land on the job's next claim, which carries the same attempt. Returns
   * how many rows were written. Core calls it with the heartbeat, never once per `ctx.progress()` call.
   * Optional: the `progress` capability (without it `ctx.progress()` throws `SONIQ_UNSUPPORTED`).
   */
  reportProgress?(updates: readonly ProgressUpdate[], workerId?: string): Promise<number>;
}
