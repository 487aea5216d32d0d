/** The `jobs` facet: insert, read, list, count, cancel and expire jobs. */

import type { Job, QueueStats, TraceContext } from "../common/types.js";
import type { JobStatus } from "../schema/constants.js";
import type { AuditRecord } from "./audit.js";

/** A job to insert. Core fills every field; backends apply no defaults of their own. */
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
  /** The job's group on its queue (`groupConcurrency`), or null. */
  group: string | null;
  /** The workflow and step this job belongs to (set by core for flow steps only), else null. */
  flowId: string | null;
  /** The version of `args` (DESIGN.md section 20): the definition's, or the producer's `{ version }`; null: unversioned. */
  argsVersion: number | null;
  stepRef: string | null;
  /** The trace id of `traceContext`, or null (stored as is). */
  traceId: string | null;
  /** The propagation carrier a tracing plugin supplied at enqueue, or null (stored as is). */
  traceContext: TraceContext | null;
}

export interface EnqueueResult {
  id: string;
  /** True when an existing queued job (same `dedupKey`, or same name+args for unique jobs) was returned. */
  deduplicated: boolean;
}

export interface EnqueueOptions<TTx = unknown> {
  /** Run the insert inside the caller's transaction (only with `capabilities.transactionalEnqueue`). */
  tx?: TTx;
  /**
   * `"async"` (never with `tx`): the enqueue's own transaction may commit without waiting for its write to be on
   * disk (Postgres: `synchronous_commit = off` for that transaction). A backend whose commits are not flushed one
   * by one anyway (SQLite in WAL mode with `synchronous = NORMAL`, memory) treats it as `"durable"`.
   */
  durability?: "durable" | "async";
}

/**
 * A keyset position in a newest-first list, normalised by core.
 *
 * - Jobs order by **id alone**, descending, and compare the position's `id` only (`at` is the row's
 *   `createdAt`, which a jobs backend does not read). Core mints job ids as UUIDv7 (`newJobId`: the
 *   creation millisecond, then a counter, monotonic within a process), so id order is creation order
 *   and the primary key serves every page: no list index taking an entry for every row version.
 *   Ids compare as lower-case UUID text, which is also Postgres's `uuid` order.
 * - Dead letters order by `moved_to_dead_letter_at` **at millisecond precision** (what
 *   `movedToDeadLetterAt` shows), then by id, both descending, and compare the pair; a backend storing
 *   finer times orders and compares the millisecond (Postgres truncates), so every backend pages alike.
 */
export interface ListPosition {
  /** The row's instant, a whole millisecond (dead letters compare it; jobs do not). */
  at: Date;
  /** A lower-case UUID (the row need not exist any more). */
  id: string;
  /**
   * `older`: the rows after the position in list order, returned newest first.
   * `newer`: the rows before it, returned **nearest first** (oldest first); core turns the page around.
   */
  direction: "older" | "newer";
}

/** A normalised job filter: every key present, `null` = no filter on it. */
export interface JobListQuery {
  /** Non-empty when set. */
  statuses: readonly JobStatus[] | null;
  queue: string | null;
  jobName: string | null;
  /**
   * Text search, non-empty: rows whose id, job name or last error contains it, ignoring case (lower-case
   * both sides; SQLite's `lower` folds ASCII only). Every character is literal: no `%` or `_` wildcards.
   */
  q: string | null;
  /** Only rows with these ids: lower-case UUIDs, distinct, at most 1000; empty = no row matches. */
  ids: readonly string[] | null;
  /** 1..1000. */
  limit: number;
  /** >= 0; 0 whenever `position` is set. */
  offset: number;
  /** Page from this row instead of from the top; null = from the top. */
  position: ListPosition | null;
}

export interface StatsQuery {
  queue: string | null;
}

export interface JobsFacet<TTx = unknown> {
  enqueue(job: NewJob, options: EnqueueOptions<TTx>): Promise<EnqueueResult>;
  /** All or nothing, one round trip where the storage allows; results in input order. */
  enqueueMany(jobs: readonly NewJob[], options: EnqueueOptions<TTx>): Promise<EnqueueResult[]>;
  get(id: string): Promise<Job | null>;
  /**
   * Newest first: id descending (ids are UUIDv7, time-ordered), and a `position` compares by id only, so
   * a page reads `limit` entries of the primary key from any position. See `ListPosition`.
   */
  list(query: JobListQuery): Promise<Job[]>;
  /** The six counts (see `QueueStats`), for one queue or all. */
  stats(query: StatsQuery): Promise<QueueStats>;
  /**
   * Cancel a queued or processing job. False when it is missing or already terminal. With `audit`, the
   * audit row is written in the same transaction, only when the job was cancelled.
   */
  cancel(id: string, audit?: AuditRecord): Promise<boolean>;
  /** Delete done rows whose result TTL has passed. Returns how many. */
  deleteExpired(): Promise<number>;
}
