/**
 * The Backend contract, grouped by facet: what the worker and the app need from storage, and nothing
 * about SQL. Every backend implements it with one file per facet (`src/<facet>.ts`, the same names in
 * every backend); `@soniq/testkit` certifies it. Backend authors import it from `@soniq/core/backend`.
 *
 * Core wraps every backend with `guardBackend`, which validates and normalises every input once
 * (ids, filters, paging, dates, delays) and gives the lifecycle guarantees (migrations once, typed error
 * after close, memoised close). A backend therefore trusts its inputs: filters arrive complete
 * (`null` = no filter), limits and offsets are always present and in range, ids are lower-case strings.
 *
 * Rules that are the same everywhere live in core, not here: what a retry, snooze or nack writes to
 * `attempts` and `last_error` (core sends the values; see `Settlement`), dead-lettering a job claimed past
 * its `max_attempts` (core settles it as `dead_letter` before running it), paging defaults, the text of
 * `last_error`.
 *
 * Conventions every implementation keeps:
 * - An id that names no row means "not found": reads return null, writes return false. Never throw for that.
 * - Worker-side writes (`runs.settle`) are fenced by (id, attempt): they apply only while the row is
 *   `processing` with the `attempts` the claim gave it, so a late write after cancel, recovery or a
 *   re-claim is a no-op (reported as not applied).
 * - Every requeue (retry, snooze, nack, recovery) clears `worker_id`.
 * - Time comparisons (due jobs, heartbeats, expiry, leases) use the backend's own clock (the database's
 *   `now()` for SQL backends). Relative delays are passed as milliseconds for that reason.
 * - Writing a status outside the four, or changing a done/cancelled job's status, fails with
 *   `SONIQ_INVALID_STATUS_TRANSITION` and changes nothing (the SQL backends' storage enforces it too).
 */

import type { ReplicationStatusMethod } from "./replication.js";
import type { Schedule, ScheduleTick, TickOutcome } from "./schedules/types.js";
import type { DeadLetterReason, JobStatus } from "./schema/constants.js";
import type {
  AuditAction,
  AuditEntry,
  DeadLetterJob,
  Job,
  QueueInfo,
  QueueSettings,
  QueueStats,
  RateLimit,
  WorkerInfo,
} from "./types.js";

export interface BackendCapabilities {
  /** Wake-ups reach workers in other processes (Postgres LISTEN/NOTIFY). Without it core polls. */
  readonly notify: boolean;
  /** `jobs.enqueue`/`enqueueMany` accept `tx` and write inside the caller's transaction. */
  readonly transactionalEnqueue: boolean;
  /** Leases are enforced across processes by the database (advisory locks or lease rows). */
  readonly advisoryLocks: boolean;
  /** Several processes can share this backend's storage (false for memory). */
  readonly multiProcess: boolean;
}

// ---------------------------------------------------------------------------------------------------
// migrations

export interface MigrationStatus {
  applied: string[];
  pending: string[];
}

export interface MigrationReport extends MigrationStatus {
  /** Migrations this call applied (empty when already up to date). */
  appliedNow: string[];
}

export interface MigrationsFacet {
  /** Create or upgrade the schema. Idempotent (a second call applies nothing); safe across processes. */
  apply(): Promise<MigrationReport>;
  status(): Promise<MigrationStatus>;
}

// ---------------------------------------------------------------------------------------------------
// jobs

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

// ---------------------------------------------------------------------------------------------------
// runs

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
}

/** The run succeeded: `done` with its result, kept `resultTtlMs` (0 deletes the row now). */
export interface DoneSettlement extends JobRef {
  kind: "done";
  result: unknown;
  resultTtlMs: number;
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
}

export type Settlement = DoneSettlement | RequeueSettlement | DeadLetterSettlement;

export interface RunsFacet {
  /**
   * Take up to `limit` due queued jobs in priority, scheduled_at, created_at order, leaving out paused
   * queues and taking from limited ones only what their limits allow (and `limitedMax` in all); mark them
   * processing, attempts + 1, worker id stamped; return them. Returns every job it took, including one
   * whose attempts now exceed `max_attempts` (core dead-letters those). A result shorter than `limit`
   * means nothing more is due, unless `capped` says a limit held due jobs back.
   */
  claim(request: ClaimRequest): Promise<ClaimResult>;
  /**
   * Write any mix of outcomes in one call: one statement (Postgres), one IMMEDIATE transaction (SQLite),
   * one synchronous step (memory). Each item is fenced by (id, attempt). Returns, in input order,
   * whether each item applied. Rejects only when the call as a whole failed (then nothing changed).
   */
  settle(items: readonly Settlement[]): Promise<boolean[]>;
}

// ---------------------------------------------------------------------------------------------------
// deadLetters

/** A normalised dead-letter filter: every key present, `null` = no filter on it. */
export interface DeadLetterMatch {
  jobName: string | null;
  queue: string | null;
  reason: string | null;
  /** Moved at or after this instant. */
  since: Date | null;
  /** Moved before this instant. */
  until: Date | null;
}

/** A page of the dead letters matching the filter. */
export interface DeadLetterListQuery extends DeadLetterMatch {
  /** 1..1000. */
  limit: number;
  /** >= 0; 0 whenever `position` is set. */
  offset: number;
  /** Page from this row instead of from the top; null = from the top. */
  position: ListPosition | null;
}

export interface ReplayRequest {
  /** Fresh UUID for the new job, chosen by core. */
  newId: string;
  /** Each `null` keeps the dead-letter row's value (`scheduledAt` null = due now). */
  queue: string | null;
  priority: number | null;
  scheduledAt: Date | null;
}

export interface DeadLettersFacet {
  /** Newest first: moved_to_dead_letter_at (whole milliseconds) descending, then id descending. */
  list(query: DeadLetterListQuery): Promise<DeadLetterJob[]>;
  /** How many rows match (exact: a bulk operation's dry run reports it). */
  count(match: DeadLetterMatch): Promise<number>;
  get(id: string): Promise<DeadLetterJob | null>;
  /**
   * In one transaction: insert a queued job (new id, attempts 0, same name/args/max_attempts) and bump the
   * dead-letter row's resurrection_count and last_resurrection_at. Returns the new id, or null if no row.
   */
  replay(id: string, request: ReplayRequest, audit?: AuditRecord): Promise<string | null>;
  /** Delete a dead-letter row. False when there was none. */
  purge(id: string, audit?: AuditRecord): Promise<boolean>;
}

// ---------------------------------------------------------------------------------------------------
// workers

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

// ---------------------------------------------------------------------------------------------------
// leases

export interface LeasesFacet {
  /** Acquire or renew the named lease for `holder` for `ttlMs`. True when `holder` holds it now. */
  tryAcquire(name: string, holder: string, ttlMs: number): Promise<boolean>;
  /** Release it if `holder` holds it. */
  release(name: string, holder: string): Promise<void>;
}

// ---------------------------------------------------------------------------------------------------
// wakeUps

/** Called with the queue name of a job that became available. A hint: polling stays the fallback. */
export type WakeUpListener = (queue: string) => void;

export interface WakeUpsFacet {
  /** Resolves once listening. The returned function unsubscribes. */
  subscribe(listener: WakeUpListener): Promise<() => Promise<void>>;
}

// ---------------------------------------------------------------------------------------------------
// schedules (recurring jobs; see src/schedules/ for the words and the rules, which live in core)

/** A schedule as code declares it (see `Schedule` for the fields). Core validates it and computes its first tick. */
export interface ScheduleDeclaration
  extends Pick<
    Schedule,
    | "name"
    | "jobName"
    | "cron"
    | "every"
    | "timezone"
    | "args"
    | "queue"
    | "priority"
    | "maxAttempts"
    | "catchUp"
  > {
  /**
   * The first tick, used when the schedule is new or its timing (`cron`, `every`, `timezone`) changed.
   * An existing schedule with the same timing keeps its `nextRunAt`, `paused`, `lastRunAt` and `lastJobId`.
   */
  nextRunAt: Date | null;
}

/** One tick to record. The ledger row, the job and the schedule's advance commit together or not at all. */
export interface TickRecord {
  scheduleName: string;
  tickAt: Date;
  /** `fired` enqueues `job`; `deduplicated` is never sent (the backend reports it when the enqueue deduplicated). */
  outcome: Exclude<TickOutcome, "deduplicated">;
  reason: string | null;
  /** Required when `outcome` is `fired`. */
  job: NewJob | null;
  /**
   * The schedule's next tick after this one: `next_run_at` moves to it (never backwards). Null leaves
   * `next_run_at` alone (a manual trigger).
   */
  nextRunAt: Date | null;
  /**
   * A manual trigger: fires even while the schedule is paused. Otherwise a `fired` tick of a schedule
   * that is paused when the transaction runs is recorded `skipped` with reason `paused`, and no job is made.
   */
  manual: boolean;
}

export type TickRecordResult =
  /** This call wrote the ledger row (and the job, for fired/deduplicated). */
  | { status: "recorded"; tick: ScheduleTick }
  /** The row already existed (another scheduler recorded the tick): nothing changed; `tick` is that row. */
  | { status: "duplicate"; tick: ScheduleTick }
  /** No schedule has that name (removed meanwhile): nothing was written. */
  | { status: "no_schedule" };

export interface SchedulesFacet {
  /** Insert new schedules, update changed ones (see `ScheduleDeclaration.nextRunAt`); one transaction. */
  upsert(declarations: readonly ScheduleDeclaration[]): Promise<void>;
  /** Every schedule, by name. */
  list(): Promise<Schedule[]>;
  get(name: string): Promise<Schedule | null>;
  /**
   * False when there is no such schedule. With `audit`, the audit row is written in the same transaction,
   * only when there was one.
   */
  setPaused(name: string, paused: boolean, audit?: AuditRecord): Promise<boolean>;
  /** Delete the schedule and its ledger. False when there was none. `audit` as for `setPaused`. */
  remove(name: string, audit?: AuditRecord): Promise<boolean>;
  /**
   * In one transaction: insert the ledger row (unique per (schedule, tick)); for a fired tick, enqueue the
   * job (a deduplicated enqueue records `deduplicated` with the existing job's id); move `next_run_at`
   * forward to `nextRunAt`; for a fired tick set `last_run_at` = tickAt, `last_job_id`, `run_count` + 1.
   * With `audit` (a manual trigger), the same transaction writes `triggerAudit(audit, result)` when that
   * is not null: when the tick returned, recorded or duplicate, names a job.
   */
  recordTick(tick: TickRecord, audit?: AuditRecord): Promise<TickRecordResult>;
  /** The ledger, newest tick first. `limit` is 1..1000. */
  history(name: string, query: { limit: number }): Promise<ScheduleTick[]>;
}

// ---------------------------------------------------------------------------------------------------
// queues (queue controls) and audit

/**
 * One audit row, built by core (id, actor, action, target, params, outcome, details). A backend writes it
 * in the same transaction as the action it records, where it has transactions; an action taking an
 * optional record (cancel, replay, purge, a schedule's setPaused, remove and manual recordTick) writes it
 * only when it changed something (core records the not-found outcome itself).
 */
export interface AuditRecord {
  id: string;
  actor: string;
  action: AuditAction;
  target: string | null;
  params: Record<string, unknown> | null;
  outcome: string;
  details: Record<string, unknown> | null;
}

/**
 * A normalised change to a queue's limits: a key that is `undefined` keeps the stored value, `null` clears
 * it. Values arrive validated (positive integers).
 */
export interface QueueConfigPatch {
  concurrency?: number | null;
  groupConcurrency?: number | null;
  rateLimit?: RateLimit | null;
}

export interface QueuesFacet {
  /** Mark the queue paused (creating its row), writing `audit` with it. Returns the settings after. */
  pause(name: string, audit: AuditRecord): Promise<QueueSettings>;
  /** Unpause it (a queue without a row stays without limits), writing `audit`; workers are woken. */
  resume(name: string, audit: AuditRecord): Promise<QueueSettings>;
  /** Merge `patch` into the queue's settings (creating the row), writing `audit`. */
  configure(name: string, patch: QueueConfigPatch, audit: AuditRecord): Promise<QueueSettings>;
  /** The queue's settings; a queue without a row reads as unpaused and unlimited. */
  get(name: string): Promise<QueueSettings>;
  /**
   * Every queue with jobs, dead letters or settings, by name, with its stats and lag. `queued` and
   * `processing` are exact. `done`, `cancelled` and `dead_letter` are exact up to `exactCountsUpTo`; a
   * larger one may be an estimate (never below `exactCountsUpTo + 1`), named in the entry's `estimated`.
   */
  list(query: QueueListQuery): Promise<QueueInfo[]>;
  /** Starts recorded for the queue's rate limit within the last `perMs` (by the backend's clock). */
  recentStarts(name: string, perMs: number): Promise<RecentStarts>;
}

export interface QueueListQuery {
  /** Counts up to this many are exact (>= 0; core sends `EXACT_COUNTS_UP_TO`). */
  exactCountsUpTo: number;
}

export interface RecentStarts {
  count: number;
  /** The oldest start in the window, or null. */
  oldestAt: Date | null;
}

/** A normalised audit filter. */
export interface AuditListQuery {
  action: string | null;
  /** At or after this instant. */
  since: Date | null;
  /** 1..1000. */
  limit: number;
}

export interface AuditFacet {
  /** Write one audit row on its own (actions whose facet takes no audit record). */
  record(entry: AuditRecord): Promise<void>;
  /** Newest first (at descending, then id descending). */
  list(query: AuditListQuery): Promise<AuditEntry[]>;
}

// ---------------------------------------------------------------------------------------------------
// metrics (per-minute counters)

/** One `soniq_metrics` row: counts for (minute, queue, job name). `record` adds them to what is stored. */
export interface MetricsRow {
  /** The minute, at a whole minute (UTC). */
  bucketStart: Date;
  queue: string;
  jobName: string;
  done: number;
  failed: number;
  retried: number;
  deadLettered: number;
  snoozed: number;
  runMsSum: number;
}

export interface MetricsListQuery {
  since: Date;
  queue: string | null;
}

export interface MetricsFacet {
  /** Add each row's counts to the stored row of its key (creating it), all in one transaction. */
  record(rows: readonly MetricsRow[]): Promise<void>;
  /** Rows with bucketStart >= since (one queue or all), oldest first. */
  list(query: MetricsListQuery): Promise<MetricsRow[]>;
  /** Delete rows whose minute is older than `olderThanMs` (by the backend's clock). Returns how many. */
  prune(olderThanMs: number): Promise<number>;
}

// ---------------------------------------------------------------------------------------------------
// the backend

export interface Backend<TTx = never> {
  readonly name: string;
  readonly capabilities: BackendCapabilities;
  readonly migrations: MigrationsFacet;
  readonly jobs: JobsFacet<TTx>;
  readonly runs: RunsFacet;
  readonly deadLetters: DeadLettersFacet;
  readonly workers: WorkersFacet;
  readonly leases: LeasesFacet;
  readonly wakeUps: WakeUpsFacet;
  readonly schedules: SchedulesFacet;
  readonly queues: QueuesFacet;
  readonly audit: AuditFacet;
  readonly metrics: MetricsFacet;
  /** Optional: where the operator's reads go and the replica's lag (replication.ts). */
  readonly replicationStatus?: ReplicationStatusMethod;
  /** Release what the backend owns (never a pool or database handed to it). */
  close(): Promise<void>;
}

/** The transaction handle type a backend accepts. */
export type BackendTx<B> = B extends Backend<infer T> ? T : never;

/*
 * The one fault hook has one name on every backend: `testHooks.interruptDeadLetterMove` in the backend's
 * options, consulted before a dead-letter move; when it says so, the move fails between its two steps
 * (dead-letter row inserted, job row not yet deleted), as a dropped connection would, so the call rejects
 * and nothing changed. Its argument and return value are the backend's own (Postgres kills a connection).
 */

/** The facets and their methods, so the guard (and the testkit) can check a backend is complete. */
export const BACKEND_FACETS = {
  migrations: ["apply", "status"],
  jobs: ["enqueue", "enqueueMany", "get", "list", "stats", "cancel", "deleteExpired"],
  runs: ["claim", "settle"],
  deadLetters: ["list", "count", "get", "replay", "purge"],
  workers: ["register", "heartbeat", "stop", "list", "recoverStale", "registerTaskNames", "listTaskNames"],
  leases: ["tryAcquire", "release"],
  wakeUps: ["subscribe"],
  schedules: ["upsert", "list", "get", "setPaused", "remove", "recordTick", "history"],
  queues: ["pause", "resume", "configure", "get", "list", "recentStarts"],
  audit: ["record", "list"],
  metrics: ["record", "list", "prune"],
} as const satisfies {
  [F in Exclude<
    keyof Backend,
    "name" | "capabilities" | "close" | "replicationStatus"
  >]: readonly (keyof Backend[F])[];
};

export type BackendFacetName = keyof typeof BACKEND_FACETS;
