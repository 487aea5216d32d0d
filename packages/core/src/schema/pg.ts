/**
 * PostgreSQL schema (drizzle-orm/pg-core). drizzle-kit generates packages/backend-postgres/drizzle from
 * this file (with the webhook tables it re-exports from pg-webhooks.ts); the status guards it cannot express
 * live in a custom migration there.
 */
import { sql } from "drizzle-orm";
import {
  boolean,
  check,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import {
  FLOW_STATES,
  FLOW_STEP_STATES,
  JOB_DEFAULTS,
  JOB_STATUS_CHECK,
  JOB_STATUSES,
  PARENT_FAILURE_POLICIES,
  RECURRING_STATUSES,
  SCHEDULE_TYPES,
  sqlList,
  TICK_OUTCOMES,
  WORKER_STATUSES,
} from "./constants.js";
import { msOf, tstz } from "./pg-columns.js";
import { soniqJobSignals, soniqJobSteps } from "./pg-steps.js";
import { soniqWebhookDeliveries, soniqWebhookEndpoints } from "./pg-webhooks.js";

export const soniqWorkers = pgTable(
  "soniq_workers",
  {
    id: uuid("id").primaryKey(),
    hostname: text("hostname").notNull(),
    pid: integer("pid").notNull(),
    queues: text("queues").array().notNull().default(sql`'{}'::text[]`),
    concurrency: integer("concurrency").notNull().default(1),
    status: text("status", { enum: WORKER_STATUSES }).notNull().default("active"),
    lastHeartbeat: tstz("last_heartbeat").notNull().defaultNow(),
    startedAt: tstz("started_at").notNull().defaultNow(),
    version: text("version"),
    metadata: jsonb("metadata").$type<Record<string, unknown>>(),
  },
  (t) => [
    check("soniq_workers_status_check", sql`${t.status} in (${sql.raw(sqlList(WORKER_STATUSES))})`),
    index("idx_soniq_workers_last_heartbeat").on(t.lastHeartbeat),
    index("idx_soniq_workers_status").on(t.status),
  ],
);

export const soniqJobs = pgTable(
  "soniq_jobs",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    jobName: text("job_name").notNull(),
    args: jsonb("args").$type<unknown>().notNull(),
    argsHash: text("args_hash"),
    status: text("status", { enum: JOB_STATUSES }).notNull().default("queued"),
    attempts: integer("attempts").notNull().default(0),
    maxAttempts: integer("max_attempts").notNull().default(JOB_DEFAULTS.maxAttempts),
    queue: text("queue").notNull().default(JOB_DEFAULTS.queue),
    priority: integer("priority").notNull().default(JOB_DEFAULTS.priority),
    uniqueJob: boolean("unique_job").notNull().default(false),
    dedupKey: text("dedup_key"),
    scheduledAt: tstz("scheduled_at").notNull().defaultNow(),
    expiresAt: tstz("expires_at"),
    lastError: text("last_error"),
    result: jsonb("result").$type<unknown>(),
    producerId: text("producer_id"),
    workerId: uuid("worker_id"),
    /** The job's group on its queue (`groupConcurrency` caps processing jobs per group); null = none. */
    group: text("group"),
    /** The workflow this job is a step of, and the step's ref (null outside flows). */
    flowId: uuid("flow_id"),
    stepRef: text("step_ref"),
    /** The version of `args` (DESIGN.md section 20); null: unversioned. */
    argsVersion: integer("args_version"),
    createdAt: tstz("created_at").notNull().defaultNow(),
    updatedAt: tstz("updated_at").notNull().defaultNow(),
    /** The handler's last `ctx.progress(value)`, written with the worker's heartbeat (DESIGN.md section 16). */
    progress: jsonb("progress").$type<unknown>(),
    /** The trace the job was enqueued under (W3C trace id, 32 hex), for operators' queries; null = none. */
    traceId: text("trace_id"),
    /** The propagation carrier stored at enqueue (`traceparent`, `tracestate`); null = no trace was active. */
    traceContext: jsonb("trace_context").$type<Record<string, string>>(),
  },
  (t) => [
    check(JOB_STATUS_CHECK, sql`${t.status} in (${sql.raw(sqlList(JOB_STATUSES))})`),
    // No foreign key on worker_id: its check ran once per claimed row (a lookup and a FOR KEY SHARE lock on
    // the worker row), about a quarter of a 500-row claim's time (bench/README.md). The claim checks the
    // worker's registration once per statement instead, and Soniq never deletes worker rows.
    // The worker's fetch, in the claim's full order (priority, scheduled_at, created_at) so the claim reads
    // the first N entries instead of sorting every queued row: per queue, and across all queues (a worker
    // with no queue filter, the default). Only queued rows are indexed, so claims and completions add no entries.
    index("idx_soniq_jobs_fetch")
      .on(t.queue, t.priority, t.scheduledAt, t.createdAt)
      .where(sql`status = 'queued'`),
    index("idx_soniq_jobs_fetch_all")
      .on(t.priority, t.scheduledAt, t.createdAt)
      .where(sql`status = 'queued'`),
    uniqueIndex("idx_soniq_jobs_dedup_key")
      .on(t.dedupKey)
      .where(sql`status = 'queued' AND dedup_key IS NOT NULL`),
    uniqueIndex("idx_soniq_jobs_unique_queued")
      .on(t.jobName, t.argsHash)
      .where(sql`status = 'queued' AND unique_job`),
    // What is processing, and who holds it: a limited queue's claim counts it per queue and group (queue
    // controls), recovery finds the jobs of stale and stopped workers, explain names the holders. Only
    // processing rows are in it, so a completion (processing -> done) adds no entry here.
    index("idx_soniq_jobs_processing").on(t.queue, t.group, t.workerId).where(sql`status = 'processing'`),
    // jobs.list order and keyset pages need no index of their own: jobs list by id (UUIDv7, time-ordered),
    // so a page reads `limit` entries of the primary key backwards from any position, at any depth.
    // Finished rows only, so enqueues and claims add no entries. queues.list reads finished jobs' queue names
    // (a skip scan) and their per-(queue, status) counts from it alone (queued and processing ones come from
    // the fetch and processing indexes); the retention sweep reads, per queue, the done rows whose
    // expires_at has passed (backend-postgres jobs.ts). One index for both: a completion writes one entry
    // here, where a separate expires_at index cost it a second (bench/README.md, issue 29).
    index("idx_soniq_jobs_finished")
      .on(t.queue, t.status, t.expiresAt)
      .where(sql`status IN ('done', 'cancelled')`),
  ],
);

export const soniqDeadLetterJobs = pgTable(
  "soniq_dead_letter_jobs",
  {
    id: uuid("id").primaryKey(),
    jobName: text("job_name").notNull(),
    args: jsonb("args").$type<unknown>().notNull(),
    queue: text("queue").notNull(),
    priority: integer("priority").notNull(),
    maxAttempts: integer("max_attempts").notNull(),
    attempts: integer("attempts").notNull(),
    lastError: text("last_error"),
    deadLetterReason: text("dead_letter_reason").notNull(),
    tags: jsonb("tags").$type<Record<string, unknown>>(),
    resurrectionCount: integer("resurrection_count").notNull().default(0),
    lastResurrectionAt: tstz("last_resurrection_at"),
    originalCreatedAt: tstz("original_created_at").notNull(),
    movedToDeadLetterAt: tstz("moved_to_dead_letter_at").notNull().defaultNow(),
    createdAt: tstz("created_at").notNull().defaultNow(),
    /** The job's workflow and step ref, kept so a replay rejoins the flow. */
    flowId: uuid("flow_id"),
    stepRef: text("step_ref"),
    /** The version of `args` (DESIGN.md section 20); null: unversioned. */
    argsVersion: integer("args_version"),
    /** The job's trace, kept from `soniq_jobs` so a replay can link to it. */
    traceId: text("trace_id"),
    traceContext: jsonb("trace_context").$type<Record<string, string>>(),
  },
  (t) => [
    // Every dead-letter move writes each index, so there are two besides the key: queue (queues.list's skip
    // scan and per-queue counts) and the list order. A job-name or reason filter walks the list order (100,000
    // rows: at most a few tens of ms); separate indexes on them cost the failure path two entries per job.
    index("idx_soniq_dead_letter_jobs_queue").on(t.queue),
    // deadLetters.list order, keyset pages and since/until: moved_to_dead_letter_at to the millisecond, then id.
    index("idx_soniq_dead_letter_jobs_moved_at").on(msOf(t.movedToDeadLetterAt), t.id),
  ],
);

export const soniqTaskRegistry = pgTable(
  "soniq_task_registry",
  {
    taskName: text("task_name").notNull(),
    /** The version of the job's arguments the worker's handler takes; null: unversioned. */
    version: integer("version"),
    workerId: text("worker_id").notNull(),
    lastSeenAt: tstz("last_seen_at").notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "soniq_task_registry_pkey", columns: [t.taskName, t.workerId] }),
    index("idx_soniq_task_registry_task_name").on(t.taskName),
  ],
);

export const soniqRecurringJobs = pgTable(
  "soniq_recurring_jobs",
  {
    /** The schedule's name. */
    id: text("id").primaryKey(),
    jobName: text("job_name").notNull(),
    scheduleType: text("schedule_type", { enum: SCHEDULE_TYPES }).notNull(),
    scheduleValue: text("schedule_value").notNull(),
    timezone: text("timezone"),
    args: jsonb("args").$type<unknown>().notNull().default(sql`'{}'::jsonb`),
    /** `"none"`, `"latest"` or `{ "withinMs": n }`. */
    catchUp: jsonb("catch_up").$type<unknown>().notNull().default(sql`'"latest"'::jsonb`),
    queue: text("queue"),
    priority: integer("priority"),
    maxAttempts: integer("max_attempts"),
    status: text("status", { enum: RECURRING_STATUSES }).notNull().default("active"),
    lastRunAt: tstz("last_run_at"),
    nextRunAt: tstz("next_run_at"),
    runCount: integer("run_count").notNull().default(0),
    lastJobId: uuid("last_job_id"),
    createdAt: tstz("created_at").notNull().defaultNow(),
    updatedAt: tstz("updated_at").notNull().defaultNow(),
  },
  (t) => [
    check(
      "soniq_recurring_jobs_schedule_type_check",
      sql`${t.scheduleType} in (${sql.raw(sqlList(SCHEDULE_TYPES))})`,
    ),
    check("soniq_recurring_jobs_status_check", sql`${t.status} in (${sql.raw(sqlList(RECURRING_STATUSES))})`),
    index("idx_soniq_recurring_jobs_next_run_at").on(t.nextRunAt),
  ],
);

/** The tick ledger: one row per (schedule, tick), written in the transaction that enqueues the tick's job. */
export const soniqScheduleTicks = pgTable(
  "soniq_schedule_ticks",
  {
    scheduleName: text("schedule_name").notNull(),
    tickAt: tstz("tick_at").notNull(),
    outcome: text("outcome", { enum: TICK_OUTCOMES }).notNull(),
    jobId: uuid("job_id"),
    reason: text("reason"),
    recordedAt: tstz("recorded_at").notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "soniq_schedule_ticks_pkey", columns: [t.scheduleName, t.tickAt] }),
    check("soniq_schedule_ticks_outcome_check", sql`${t.outcome} in (${sql.raw(sqlList(TICK_OUTCOMES))})`),
  ],
);

/** Time-bound leases for leader election where advisory locks are not used. */
export const soniqLeases = pgTable("soniq_leases", {
  name: text("name").primaryKey(),
  holder: text("holder").notNull(),
  expiresAt: tstz("expires_at").notNull(),
});

/** Queue controls: a queue without a row is unpaused and unlimited. */
export const soniqQueues = pgTable("soniq_queues", {
  name: text("name").primaryKey(),
  paused: boolean("paused").notNull().default(false),
  pausedAt: tstz("paused_at"),
  concurrency: integer("concurrency"),
  groupConcurrency: integer("group_concurrency"),
  rateMax: integer("rate_max"),
  ratePerMs: integer("rate_per_ms"),
  lagAlertMs: integer("lag_alert_ms"),
  updatedAt: tstz("updated_at").notNull().defaultNow(),
});

/** The rate limiter's record: one row per start in a rate-limited queue, pruned past the window. */
export const soniqQueueStarts = pgTable(
  "soniq_queue_starts",
  {
    queue: text("queue").notNull(),
    startedAt: tstz("started_at").notNull().defaultNow(),
    jobId: uuid("job_id").notNull(),
  },
  (t) => [primaryKey({ name: "soniq_queue_starts_pkey", columns: [t.queue, t.startedAt, t.jobId] })],
);

/** One row per operator action through the Soniq API. */
export const soniqAuditLog = pgTable(
  "soniq_audit_log",
  {
    id: uuid("id").primaryKey(),
    at: tstz("at").notNull().defaultNow(),
    actor: text("actor").notNull(),
    action: text("action").notNull(),
    target: text("target"),
    params: jsonb("params").$type<Record<string, unknown>>(),
    outcome: text("outcome").notNull(),
    details: jsonb("details").$type<Record<string, unknown>>(),
  },
  (t) => [index("idx_soniq_audit_log_at").on(t.at), index("idx_soniq_audit_log_action").on(t.action, t.at)],
);

/** Per-minute counters, written in batches by workers. */
export const soniqMetrics = pgTable(
  "soniq_metrics",
  {
    bucketStart: tstz("bucket_start").notNull(),
    queue: text("queue").notNull(),
    jobName: text("job_name").notNull(),
    done: integer("done").notNull().default(0),
    failed: integer("failed").notNull().default(0),
    retried: integer("retried").notNull().default(0),
    deadLettered: integer("dead_lettered").notNull().default(0),
    snoozed: integer("snoozed").notNull().default(0),
    runMsSum: doublePrecision("run_ms_sum").notNull().default(0),
  },
  (t) => [primaryKey({ name: "soniq_metrics_pkey", columns: [t.bucketStart, t.queue, t.jobName] })],
);

/**
 * Workflows (DESIGN.md section 15). A flow row keeps its step counters so a step's change updates the
 * flow's state in O(1); see the `flows` facet (core contract/flows.ts) for the layout and why.
 */
export const soniqFlows = pgTable(
  "soniq_flows",
  {
    id: uuid("id").primaryKey(),
    name: text("name"),
    state: text("state", { enum: FLOW_STATES }).notNull().default("running"),
    createdBy: text("created_by").notNull(),
    stepsTotal: integer("steps_total").notNull().default(0),
    stepsOpen: integer("steps_open").notNull().default(0),
    stepsFailed: integer("steps_failed").notNull().default(0),
    stepsHeld: integer("steps_held").notNull().default(0),
    createdAt: tstz("created_at").notNull().defaultNow(),
    finishedAt: tstz("finished_at"),
    /** When the `flow.finished` sweep wrote its deliveries (null = not yet, or not finished). */
    notifiedAt: tstz("notified_at"),
  },
  (t) => [
    check("soniq_flows_state_check", sql`${t.state} in (${sql.raw(sqlList(FLOW_STATES))})`),
    index("idx_soniq_flows_state").on(t.state, t.id),
    index("idx_soniq_flows_name").on(t.name, t.id),
    index("idx_soniq_flows_unnotified")
      .on(t.finishedAt)
      .where(sql`finished_at IS NOT NULL AND notified_at IS NULL`),
  ],
);

/**
 * One row per step: the prepared job (inserted on release), its parents and dependents by ref, and the
 * counter of parents not done yet that the release decrements (no scan of the flow).
 */
export const soniqFlowSteps = pgTable(
  "soniq_flow_steps",
  {
    flowId: uuid("flow_id")
      .notNull()
      .references(() => soniqFlows.id, { onDelete: "cascade" }),
    ref: text("ref").notNull(),
    seq: integer("seq").notNull(),
    jobId: uuid("job_id").notNull(),
    jobIds: jsonb("job_ids").$type<string[]>().notNull(),
    jobName: text("job_name").notNull(),
    job: jsonb("job").$type<Record<string, unknown>>().notNull(),
    dependsOn: jsonb("depends_on").$type<string[]>().notNull(),
    dependents: jsonb("dependents").$type<string[]>().notNull(),
    onParentFailure: text("on_parent_failure", { enum: PARENT_FAILURE_POLICIES }).notNull(),
    state: text("state", { enum: FLOW_STEP_STATES }).notNull(),
    pendingParents: integer("pending_parents").notNull(),
    reason: text("reason"),
    addedBy: text("added_by"),
    createdAt: tstz("created_at").notNull().defaultNow(),
    finishedAt: tstz("finished_at"),
  },
  (t) => [
    primaryKey({ name: "soniq_flow_steps_pkey", columns: [t.flowId, t.ref] }),
    uniqueIndex("idx_soniq_flow_steps_job_id").on(t.jobId),
    check("soniq_flow_steps_state_check", sql`${t.state} in (${sql.raw(sqlList(FLOW_STEP_STATES))})`),
  ],
);

export { soniqJobSignals, soniqJobSteps, soniqWebhookDeliveries, soniqWebhookEndpoints };

export const pgSchema = {
  soniqJobs,
  soniqDeadLetterJobs,
  soniqWorkers,
  soniqTaskRegistry,
  soniqRecurringJobs,
  soniqScheduleTicks,
  soniqLeases,
  soniqQueues,
  soniqQueueStarts,
  soniqAuditLog,
  soniqMetrics,
  soniqFlows,
  soniqFlowSteps,
  soniqWebhookEndpoints,
  soniqWebhookDeliveries,
  soniqJobSteps,
  soniqJobSignals,
};
