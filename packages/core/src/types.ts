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
import type {
  FlowState,
  FlowStepState,
  JobStatus,
  ParentFailurePolicy,
  TickOutcome,
  WorkerStatus,
} from "./schema/constants.js";

export type {
  DeadLetterReason,
  FlowState,
  FlowStepState,
  JobStatus,
  ParentFailurePolicy,
  TickOutcome,
  WorkerStatus,
} from "./schema/constants.js";
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
} from "./schema/constants.js";

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

// ---------------------------------------------------------------------------------------------------
// workflows

/*
 * Workflows, the words: a *flow* is a set of *steps* keyed by *ref*; a step is a job plus the refs it
 * *depends on* (its *parents*). A step without parents is enqueued when the flow starts; the others
 * *wait* (no job row yet, never claimable) until their last parent is done, then they are *released*
 * (their job is inserted, with the id minted at start). A dead-lettered parent *holds* its dependents
 * (policy `hold`), cancels them (`cancel`) or releases them anyway (`run`).
 */

/** Why a step was cancelled or held, as `FlowStep.reason` records it. */
export type FlowStepReason =
  | "parent_dead_lettered"
  | "parent_cancelled"
  | "parent_purged"
  | "flow_cancelled"
  | "job_cancelled";

/** One step of a flow, as `flows.get` returns it. */
export interface FlowStep {
  ref: string;
  /** The job of the step: minted at start, the latest replay's once its dead letter was replayed. */
  jobId: string;
  /** Every job id the step had, oldest first (a replay appends one). */
  jobIds: string[];
  jobName: string;
  state: FlowStepState;
  dependsOn: string[];
  onParentFailure: ParentFailurePolicy;
  /** Parents not done yet (a `run` step counts a failed parent as settled). */
  pendingParents: number;
  /** Why the step is held or cancelled; null otherwise. */
  reason: FlowStepReason | null;
  /** The ref of the step that added it with `ctx.flow.add`, null for a step given at start. */
  addedBy: string | null;
  createdAt: Date;
  finishedAt: Date | null;
}

/** A flow's step counts (`open` = not terminal; `failed` = dead-lettered or cancelled). */
export interface FlowCounts {
  total: number;
  open: number;
  done: number;
  failed: number;
  held: number;
}

/** A `soniq_flows` row as `flows.list` returns it. */
export interface FlowSummary {
  id: string;
  /** The label given at start, or null. */
  name: string | null;
  state: FlowState;
  counts: FlowCounts;
  /** The `actor` given to `flows.start` (default "api"). */
  createdBy: string;
  createdAt: Date;
  finishedAt: Date | null;
}

/** A flow with its steps (`flows.get`), in the order they were given (then added). */
export interface Flow extends FlowSummary {
  steps: FlowStep[];
}

/** A parent's outcome as `ctx.flow.parents()` shows it, by ref. */
export type ParentOutcome =
  | { status: "done"; result: unknown }
  | { status: "dead_lettered"; reason: string; lastError: string | null }
  | { status: "cancelled" };

/** A step's enqueue options (`dedupKey` and `unique` do not apply: a step's job is never deduplicated). */
export interface FlowStepOptions {
  queue?: string;
  priority?: number;
  /** Due at this instant (a released step still waits for it). */
  runAt?: Date;
  /** Due this many ms after the flow starts (or `ctx.flow.add`), not after the release. */
  delayMs?: number;
  group?: string;
}

/** One step of `flows.start` or `ctx.flow.add`, keyed by its ref. */
export interface FlowStepDefinition {
  /** A job definition (what `soniq.job()` returned) or a job name. */
  job: string | { readonly name: string };
  args?: unknown;
  options?: FlowStepOptions;
  /** The refs this step waits for (its parents). */
  dependsOn?: readonly string[];
  /** What a dead-lettered (or cancelled) parent does to this step. Default `"hold"`. */
  onParentFailure?: ParentFailurePolicy;
}

/** `ctx.flow` in the handler of a flow step's job. */
export interface FlowContext {
  /** The flow's id. */
  readonly id: string;
  /** This step's ref. */
  readonly ref: string;
  /** Each parent's outcome by ref: done with its result, dead-lettered (under `"run"`), or cancelled. */
  parents(): Promise<Record<string, ParentOutcome>>;
  /**
   * Adds steps (validated now: `SONIQ_INVALID_FLOW`), written atomically with this step's `done`: a run that
   * fails adds nothing, so a retried step never adds twice. They may depend on this step and on any step of
   * the flow. Resolves with the new steps' job ids by ref.
   */
  add(steps: Record<string, FlowStepDefinition>): Promise<Record<string, string>>;
}

// Webhooks (DESIGN.md section 18): endpoints (`soniq_webhook_endpoints`) and their deliveries
// (`soniq_webhook_deliveries`, an outbox written in the same transaction as the event).

/**
 * The events the runtime fires. `job.completed` is high volume: an endpoint receives it only when it names
 * it (never through a wildcard). `webhook.test` is what `webhooks.test(id)` sends; it is not subscribable.
 */
export const WEBHOOK_EVENTS = [
  "job.completed",
  "job.failed",
  "job.retried",
  "job.dead_letter",
  "job.resurrected",
  "queue.backlog",
  "schedule.missed",
  "flow.finished",
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** What a delivery row's `event` holds: a subscribable event, or the test ping. */
export type WebhookDeliveryEvent = WebhookEvent | "webhook.test";

/**
 * A delivery's states: `pending` (due at `nextAttemptAt`, or being attempted), `delivered` (a 2xx answer),
 * `failed` (`maxAttempts` attempts failed; `redeliver` makes it `pending` again with a fresh budget).
 */
export const WEBHOOK_DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/** The retry shapes an endpoint takes (the jobs' `retry` shapes, minus functions: endpoints are stored). */
export type WebhookRetry =
  | { backoff: "exponential" | "fixed"; delayMs?: number; maxDelayMs?: number; jitter?: boolean }
  | { delaysMs: readonly number[] };

/** A registered endpoint as the API returns it. The secret is never returned: only whether there is one. */
export interface WebhookEndpoint {
  id: string;
  url: string;
  /** The events it receives (at least one). */
  events: WebhookEvent[];
  /** Extra request headers (merged under the `X-Webhook-*` ones, which always win). */
  headers: Record<string, string>;
  description: string | null;
  /** An inactive endpoint gets no new deliveries (pending ones are still attempted). */
  active: boolean;
  maxAttempts: number;
  timeoutMs: number;
  retry: WebhookRetry;
  /** Always true: a secret is required at registration; it is stored encrypted and never read back. */
  hasSecret: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** The JSON body POSTed to an endpoint (with `redact` applied to what it carries of a job). */
export interface WebhookPayload {
  event: WebhookDeliveryEvent;
  /** ISO 8601, when the event happened. */
  timestamp: string;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
}

/** One `soniq_webhook_deliveries` row: one event for one endpoint, with its attempts. */
export interface WebhookDelivery {
  /** Stable across retries and redeliveries (the `X-Webhook-Delivery` header). */
  id: string;
  endpointId: string;
  event: WebhookDeliveryEvent;
  payload: WebhookPayload;
  status: WebhookDeliveryStatus;
  attempts: number;
  maxAttempts: number;
  /** When the next attempt is due (pending), else null. */
  nextAttemptAt: Date | null;
  lastError: string | null;
  /** The last answer's HTTP status and body (at most 4 kB), if any. */
  responseStatus: number | null;
  responseBody: string | null;
  createdAt: Date;
  deliveredAt: Date | null;
  updatedAt: Date;
}
