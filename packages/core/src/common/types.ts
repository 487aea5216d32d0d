/**
 * Glossary
 * - job: one row of `soniq_jobs`: a named piece of work with JSON args, run by a worker.
 * - task name / job name: the dotted lowercase name a handler is registered under (`emails.send_welcome`).
 * - queue: a label that workers subscribe to; jobs of other queues are not claimed.
 * - attempt: one run of a job. The claim increments `attempts`, so `attempts` counts runs started.
 * - worker: a process-level loop that claims jobs and runs handlers; it heartbeats while alive.
 * - claim: atomically taking due queued jobs, marking them processing and stamping the attempt.
 * - heartbeat: a worker's periodic proof of life; peers requeue the jobs of workers that stop beating.
 * - dead letter: a job that will not run again; it moves to `soniq_dead_letter_jobs`.
 * - replay: minting a fresh queued job from a dead-letter row (the row stays, its count goes up).
 * - backend: the storage implementation behind the `Backend` contract (Postgres, SQLite, memory, yours).
 */
import type { JobStatus, TickOutcome, WorkerStatus } from "../schema/constants.js";

export type {
  DeadLetterReason,
  FlowState,
  FlowStepState,
  JobStatus,
  ParentFailurePolicy,
  TickOutcome,
  WorkerStatus,
} from "../schema/constants.js";
export {
  DEAD_LETTER_REASONS,
  FLOW_STATES,
  FLOW_STEP_STATES,
  JOB_STATUSES,
  PARENT_FAILURE_POLICIES,
  TERMINAL_FLOW_STATES,
  TERMINAL_JOB_STATUSES,
  TICK_OUTCOMES,
  WORKER_STATUSES,
} from "../schema/constants.js";

/** Any value that survives JSON.stringify / JSON.parse unchanged. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * A job: a `soniq_jobs` row, camelCase, as every backend and the public API return it. Both dialects' Drizzle
 * rows equal this type.
 */
export interface Job {
  id: string;
  jobName: string;
  args: unknown;
  argsHash: string | null;
  status: JobStatus;
  attempts: number;
  maxAttempts: number;
  queue: string;
  priority: number;
  uniqueJob: boolean;
  dedupKey: string | null;
  scheduledAt: Date;
  expiresAt: Date | null;
  lastError: string | null;
  result: unknown;
  producerId: string | null;
  workerId: string | null;
  /** The job's group on its queue (`groupConcurrency` caps processing jobs per group); null = none. */
  group: string | null;
  /** The workflow this job is a step of (`soniq_flows.id`), or null. */
  flowId: string | null;
  /** Its step's ref within that workflow, or null. */
  stepRef: string | null;
  /** The version of `args` (the definition's `version` when enqueued, DESIGN.md section 20); null: unversioned. */
  argsVersion: number | null;
  createdAt: Date;
  updatedAt: Date;
  /** The handler's last `ctx.progress(value)` (a number or small JSON value), written with the heartbeat. */
  progress: unknown;
  /** The W3C trace id (32 hex) of the trace the job was enqueued under; null when none was active. */
  traceId: string | null;
  /** The stored propagation carrier (`traceparent`, optional `tracestate`); see `TraceContext`. */
  traceContext: TraceContext | null;
}

/**
 * A trace context as stored on a job: a W3C propagation carrier (`{ traceparent, tracestate? }`). Core only
 * stores and copies it; a tracing plugin (`@soniq/opentelemetry`) supplies it at enqueue and reads it at run.
 */
export type TraceContext = Record<string, string>;

/** A dead letter: a `soniq_dead_letter_jobs` row. Both dialects' Drizzle rows equal this type. */
/** A checkpoint's kind: a `ctx.step`, a `ctx.sleep` / `sleepUntil`, or a `ctx.waitForSignal`. */
export type StepKind = "step" | "sleep" | "signal";
/**
 * A checkpoint's state: `done` (a step's value, a sleep over, a signal's payload), `failed` (a step that threw:
 * its last error), `waiting` (a sleep or a signal wait not over yet) or `timed_out` (a signal wait's deadline
 * passed).
 */
export type StepState = "done" | "failed" | "waiting" | "timed_out";

/** One checkpoint of a job (`soniq.jobs.steps(id)`, DESIGN.md section 19). */
export interface JobStep {
  /** The occurrence name: `charge`, then `charge#2` for the second call in one run. */
  name: string;
  kind: StepKind;
  state: StepState;
  /** A step's value, a signal's payload; null otherwise. */
  value: unknown;
  /** A failed step's last error. */
  error: string | null;
  /** The run (attempt) that wrote the checkpoint; 0 for a value an operator resolved at replay. */
  attempt: number;
  startedAt: Date | null;
  finishedAt: Date | null;
  /** A sleep's wake time or a signal wait's deadline. */
  wakeAt: Date | null;
}

export interface DeadLetterJob {
  id: string;
  jobName: string;
  args: unknown;
  queue: string;
  priority: number;
  maxAttempts: number;
  attempts: number;
  lastError: string | null;
  deadLetterReason: string;
  tags: Record<string, unknown> | null;
  resurrectionCount: number;
  lastResurrectionAt: Date | null;
  originalCreatedAt: Date;
  movedToDeadLetterAt: Date;
  createdAt: Date;
  /** The workflow the job was a step of (a replay rejoins it), or null. */
  flowId: string | null;
  stepRef: string | null;
  /** The version of `args`, kept from the job (a replay keeps it; the worker upcasts). */
  argsVersion: number | null;
  /** The dead job's trace (kept from the job), which a replay links to. */
  traceId: string | null;
  traceContext: TraceContext | null;
}

/**
 * Exactly six keys; `total` is the sum of the other five; `dead_letter` counts `soniq_dead_letter_jobs`.
 * (`dead_letter` keeps the snake_case spelling DESIGN.md and the Python Soniq give it.)
 */
export interface QueueStats {
  total: number;
  queued: number;
  processing: number;
  done: number;
  dead_letter: number;
  cancelled: number;
}

export interface WorkerInfo {
  id: string;
  hostname: string;
  pid: number;
  queues: string[];
  concurrency: number;
  status: WorkerStatus;
  lastHeartbeat: Date;
  startedAt: Date;
  version: string | null;
  metadata: Record<string, unknown> | null;
}

/** At most `max` starts in any `perMs` window (sliding). */
export interface RateLimit {
  max: number;
  perMs: number;
}

/** A queue's stored controls (`soniq_queues`); a queue without a row is unpaused and unlimited. */
export interface QueueSettings {
  name: string;
  paused: boolean;
  pausedAt: Date | null;
  /** Most jobs processing in the queue across all workers; null = unlimited. */
  concurrency: number | null;
  /** Most jobs processing per group (`Job.group`) in the queue; null = unlimited. */
  groupConcurrency: number | null;
  rateLimit: RateLimit | null;
  /** The lag (ms) past which the queue fires the `queue.backlog` webhook event; null = none. */
  lagAlertMs: number | null;
  updatedAt: Date | null;
}

/** The counts `soniq.queues.list()` may estimate on a large table (queued and processing are always exact). */
export const ESTIMABLE_COUNTS = ["done", "cancelled", "dead_letter"] as const;
export type EstimableCount = (typeof ESTIMABLE_COUNTS)[number];

/** One entry of `soniq.queues.list()`. */
export interface QueueInfo {
  name: string;
  paused: boolean;
  concurrency: number | null;
  groupConcurrency: number | null;
  rateLimit: RateLimit | null;
  /** The lag (ms) past which the queue fires `queue.backlog`; null = none. */
  lagAlertMs: number | null;
  stats: QueueStats;
  /**
   * The counts of `stats` that are estimates (then `total` is one too); empty when all are exact. Counts up
   * to `EXACT_COUNTS_UP_TO` (10,000) per queue are always exact.
   */
  estimated: EstimableCount[];
  /** Age of the oldest due queued job in ms; null when nothing is ready. */
  lagMs: number | null;
}

/** The operator actions the audit log records. */
export const AUDIT_ACTIONS = [
  "job.cancel",
  "job.signal",
  "job.upgrade",
  "dead_letter.replay",
  "dead_letter.purge",
  "dead_letter.replay_where",
  "dead_letter.purge_where",
  "queue.pause",
  "queue.resume",
  "queue.configure",
  "schedule.pause",
  "schedule.resume",
  "schedule.remove",
  "schedule.trigger",
  "flow.cancel",
  "webhook.register",
  "webhook.update",
  "webhook.remove",
  "webhook.test",
  "webhook.redeliver",
  "webhook.reseal",
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** A `soniq_audit_log` row. */
export interface AuditEntry {
  id: string;
  at: Date;
  actor: string;
  action: string;
  target: string | null;
  params: Record<string, unknown> | null;
  outcome: string;
  details: Record<string, unknown> | null;
}

// ---------------------------------------------------------------------------------------------------
// recurring jobs

/*
 * Recurring jobs, the words: a *schedule* says when a job recurs (a cron expression in a timezone, or a
 * fixed interval); each expected fire time is a *tick*; the *ledger* (`soniq_schedule_ticks`) holds one
 * row per (schedule, tick) saying what became of it. The scheduler's leader walks every schedule's ticks
 * from its `nextRunAt` and records each one, the job enqueue and the ledger row committing together.
 *
 * What became of a tick, as the ledger records it (`TICK_OUTCOMES`):
 * - `fired`: a job was enqueued for the tick (`jobId`); reason null on time, `catch_up` when a catch-up
 *   policy fired it late, `trigger` for `schedules.trigger()`;
 * - `skipped`: the schedule was paused at the tick (reason `paused`), or enqueue would refuse its job
 *   (reason `invalid_args`: the args fail the job's schema; `invalid_job`: any other refusal);
 * - `missed`: nobody ticked in time (no scheduler was running, or the leader was down) and the catch-up
 *   policy did not fire it: reason `catch_up_none`, `superseded` (a later tick fired under `"latest"`) or
 *   `outside_window` (older than `{ withinMs }`). Written when a scheduler next runs;
 * - `deduplicated`: the enqueue returned an existing queued job (the job is `unique`): `jobId` is that job.
 */

/**
 * What a scheduler does with ticks that passed while nobody was ticking:
 * `"none"` records them missed, `"latest"` (default) fires the most recent one once, `{ withinMs }` fires
 * every missed tick at most that old, oldest first.
 */
export type CatchUpPolicy = "none" | "latest" | { readonly withinMs: number };

/** A persisted schedule (`soniq_recurring_jobs`). Exactly one of `cron` and `every` is set. */
export interface Schedule {
  name: string;
  jobName: string;
  cron: string | null;
  /** The interval in milliseconds. */
  every: number | null;
  /** IANA timezone the cron expression is read in (`"UTC"` unless declared); null for intervals. */
  timezone: string | null;
  args: unknown;
  /** Null: the job's own queue (or the default) at fire time. */
  queue: string | null;
  priority: number | null;
  maxAttempts: number | null;
  catchUp: CatchUpPolicy;
  paused: boolean;
  /** The next tick not yet recorded. Null when a cron expression has no future fire time. */
  nextRunAt: Date | null;
  /** The tick of the last fired job. */
  lastRunAt: Date | null;
  lastJobId: string | null;
  createdAt: Date;
}

/** One ledger row. */
export interface ScheduleTick {
  tickAt: Date;
  outcome: TickOutcome;
  jobId: string | null;
  reason: string | null;
  recordedAt: Date;
}

export * from "../flows/types.js";
export * from "../webhooks/types.js";
