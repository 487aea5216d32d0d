/**
 * SQLite schema (drizzle-orm/sqlite-core). Same table, column and index names as pg.ts.
 * Ids are text UUIDs, JSON is text, timestamps are integer epoch milliseconds (mapped to Date).
 * drizzle-kit generates packages/backend-sqlite/drizzle from this file (with the webhook tables it re-exports
 * from sqlite-webhooks.ts); the status triggers live in a custom migration there.
 */
import { sql } from "drizzle-orm";
import {
  check,
  foreignKey,
  index,
  integer,
  primaryKey,
  real,
  sqliteTable,
  text,
  uniqueIndex,
} from "drizzle-orm/sqlite-core";
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
import { json, ms, nowMs } from "./sqlite-columns.js";
import { soniqJobSignals, soniqJobSteps } from "./sqlite-steps.js";
import { soniqWebhookDeliveries, soniqWebhookEndpoints } from "./sqlite-webhooks.js";

export const soniqWorkers = sqliteTable(
  "soniq_workers",
  {
    id: text("id").primaryKey(),
    hostname: text("hostname").notNull(),
    pid: integer("pid").notNull(),
    queues: json<string[]>("queues").notNull().default(sql`'[]'`),
    concurrency: integer("concurrency").notNull().default(1),
    status: text("status", { enum: WORKER_STATUSES }).notNull().default("active"),
    lastHeartbeat: ms("last_heartbeat").notNull().default(nowMs),
    startedAt: ms("started_at").notNull().default(nowMs),
    version: text("version"),
    metadata: json<Record<string, unknown>>("metadata"),
  },
  (t) => [
    check("soniq_workers_status_check", sql`${t.status} in (${sql.raw(sqlList(WORKER_STATUSES))})`),
    index("idx_soniq_workers_last_heartbeat").on(t.lastHeartbeat),
    index("idx_soniq_workers_status").on(t.status),
  ],
);

export const soniqJobs = sqliteTable(
  "soniq_jobs",
  {
    id: text("id").primaryKey(),
    jobName: text("job_name").notNull(),
    args: json<unknown>("args").notNull(),
    argsHash: text("args_hash"),
    status: text("status", { enum: JOB_STATUSES }).notNull().default("queued"),
    attempts: integer("attempts").notNull().default(0),
    maxAttempts: integer("max_attempts").notNull().default(JOB_DEFAULTS.maxAttempts),
    queue: text("queue").notNull().default(JOB_DEFAULTS.queue),
    priority: integer("priority").notNull().default(JOB_DEFAULTS.priority),
    uniqueJob: integer("unique_job", { mode: "boolean" }).notNull().default(false),
    dedupKey: text("dedup_key"),
    scheduledAt: ms("scheduled_at").notNull().default(nowMs),
    expiresAt: ms("expires_at"),
    lastError: text("last_error"),
    result: json<unknown>("result"),
    producerId: text("producer_id"),
    workerId: text("worker_id"),
    /** The job's group on its queue (`groupConcurrency` caps processing jobs per group); null = none. */
    group: text("group"),
    /** The workflow this job is a step of, and the step's ref (null outside flows). */
    flowId: text("flow_id"),
    stepRef: text("step_ref"),
    /** The version of `args` (DESIGN.md section 20); null: unversioned. */
    argsVersion: integer("args_version"),
    createdAt: ms("created_at").notNull().default(nowMs),
    updatedAt: ms("updated_at").notNull().default(nowMs),
    /** The handler's last `ctx.progress(value)`, written with the worker's heartbeat (DESIGN.md section 16). */
    progress: json<unknown>("progress"),
    /** The trace the job was enqueued under (W3C trace id, 32 hex), for operators' queries; null = none. */
    traceId: text("trace_id"),
    /** The propagation carrier stored at enqueue (`traceparent`, `tracestate`); null = no trace was active. */
    traceContext: json<Record<string, string>>("trace_context"),
  },
  (t) => [
    check(JOB_STATUS_CHECK, sql`${t.status} in (${sql.raw(sqlList(JOB_STATUSES))})`),
    foreignKey({
      name: "soniq_jobs_worker_id_fkey",
      columns: [t.workerId],
      foreignColumns: [soniqWorkers.id],
    }).onDelete("set null"),
    index("idx_soniq_jobs_fetch").on(t.queue, t.priority, t.scheduledAt).where(sql`status = 'queued'`),
    uniqueIndex("idx_soniq_jobs_dedup_key")
      .on(t.dedupKey)
      .where(sql`status = 'queued' AND dedup_key IS NOT NULL`),
    uniqueIndex("idx_soniq_jobs_unique_queued")
      .on(t.jobName, t.argsHash)
      .where(sql`status = 'queued' AND unique_job = 1`),
    // What is processing, and who holds it: a limited queue's claim counts it per queue and group (queue
    // controls), recovery finds the jobs of stale and stopped workers, explain names the holders. Only
    // processing rows are in it, so a completion (processing -> done) adds no entry here.
    index("idx_soniq_jobs_processing").on(t.queue, t.group, t.workerId).where(sql`status = 'processing'`),
    // jobs.list order and keyset pages: the primary key (ids are UUIDv7, time-ordered), no index of their own.
    // Finished rows only, so enqueues and claims add no entries. queues.list reads finished jobs' queue names
    // and per-(queue, status) counts from the index alone (queued and processing ones come from the fetch and
    // processing indexes); the retention sweep reads, per queue, the done rows whose expires_at has passed
    // (backend-sqlite jobs.ts). One index for both, as on Postgres: a completion writes one entry here, where
    // a separate expires_at index cost it a second.
    index("idx_soniq_jobs_finished")
      .on(t.queue, t.status, t.expiresAt)
      .where(sql`status IN ('done', 'cancelled')`),
  ],
);

export const soniqDeadLetterJobs = sqliteTable(
  "soniq_dead_letter_jobs",
  {
    id: text("id").primaryKey(),
    jobName: text("job_name").notNull(),
    args: json<unknown>("args").notNull(),
    queue: text("queue").notNull(),
    priority: integer("priority").notNull(),
    maxAttempts: integer("max_attempts").notNull(),
    attempts: integer("attempts").notNull(),
    lastError: text("last_error"),
    deadLetterReason: text("dead_letter_reason").notNull(),
    tags: json<Record<string, unknown>>("tags"),
    resurrectionCount: integer("resurrection_count").notNull().default(0),
    lastResurrectionAt: ms("last_resurrection_at"),
    originalCreatedAt: ms("original_created_at").notNull(),
    movedToDeadLetterAt: ms("moved_to_dead_letter_at").notNull().default(nowMs),
    createdAt: ms("created_at").notNull().default(nowMs),
    /** The job's workflow and step ref, kept so a replay rejoins the flow. */
    flowId: text("flow_id"),
    stepRef: text("step_ref"),
    /** The version of `args` (DESIGN.md section 20); null: unversioned. */
    argsVersion: integer("args_version"),
    /** The job's trace, kept from `soniq_jobs` so a replay can link to it. */
    traceId: text("trace_id"),
    traceContext: json<Record<string, string>>("trace_context"),
  },
  (t) => [
    // Every dead-letter move writes each index, so there are two besides the key: queue (queues.list's skip
    // scan and per-queue counts) and the list order. A job-name or reason filter walks the list order (100,000
    // rows: at most a few tens of ms); separate indexes on them cost the failure path two entries per job.
    index("idx_soniq_dead_letter_jobs_queue").on(t.queue),
    // deadLetters.list order, keyset pages and since/until.
    index("idx_soniq_dead_letter_jobs_moved_at").on(t.movedToDeadLetterAt, t.id),
  ],
);

export const soniqTaskRegistry = sqliteTable(
  "soniq_task_registry",
  {
    taskName: text("task_name").notNull(),
    /** The version of the job's arguments the worker's handler takes; null: unversioned. */
    version: integer("version"),
    workerId: text("worker_id").notNull(),
    lastSeenAt: ms("last_seen_at").notNull().default(nowMs),
  },
  (t) => [
    primaryKey({ name: "soniq_task_registry_pkey", columns: [t.taskName, t.workerId] }),
    index("idx_soniq_task_registry_task_name").on(t.taskName),
  ],
);

export const soniqRecurringJobs = sqliteTable(
  "soniq_recurring_jobs",
  {
    /** The schedule's name. */
    id: text("id").primaryKey(),
    jobName: text("job_name").notNull(),
    scheduleType: text("schedule_type", { enum: SCHEDULE_TYPES }).notNull(),
    scheduleValue: text("schedule_value").notNull(),
    timezone: text("timezone"),
    args: json<unknown>("args").notNull().default(sql`'{}'`),
    /** `"none"`, `"latest"` or `{ "withinMs": n }`. */
    catchUp: json<unknown>("catch_up").notNull().default(sql`'"latest"'`),
    queue: text("queue"),
    priority: integer("priority"),
    maxAttempts: integer("max_attempts"),
    status: text("status", { enum: RECURRING_STATUSES }).notNull().default("active"),
    lastRunAt: ms("last_run_at"),
    nextRunAt: ms("next_run_at"),
    runCount: integer("run_count").notNull().default(0),
    lastJobId: text("last_job_id"),
    createdAt: ms("created_at").notNull().default(nowMs),
    updatedAt: ms("updated_at").notNull().default(nowMs),
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
export const soniqScheduleTicks = sqliteTable(
  "soniq_schedule_ticks",
  {
    scheduleName: text("schedule_name").notNull(),
    tickAt: ms("tick_at").notNull(),
    outcome: text("outcome", { enum: TICK_OUTCOMES }).notNull(),
    jobId: text("job_id"),
    reason: text("reason"),
    recordedAt: ms("recorded_at").notNull().default(nowMs),
  },
  (t) => [
    primaryKey({ name: "soniq_schedule_ticks_pkey", columns: [t.scheduleName, t.tickAt] }),
    check("soniq_schedule_ticks_outcome_check", sql`${t.outcome} in (${sql.raw(sqlList(TICK_OUTCOMES))})`),
  ],
);

export const soniqLeases = sqliteTable("soniq_leases", {
  name: text("name").primaryKey(),
  holder: text("holder").notNull(),
  expiresAt: ms("expires_at").notNull(),
});

/** Queue controls: a queue without a row is unpaused and unlimited. */
export const soniqQueues = sqliteTable("soniq_queues", {
  name: text("name").primaryKey(),
  paused: integer("paused", { mode: "boolean" }).notNull().default(false),
  pausedAt: ms("paused_at"),
  concurrency: integer("concurrency"),
  groupConcurrency: integer("group_concurrency"),
  rateMax: integer("rate_max"),
  ratePerMs: integer("rate_per_ms"),
  lagAlertMs: integer("lag_alert_ms"),
  updatedAt: ms("updated_at").notNull().default(nowMs),
});

/** The rate limiter's record: one row per start in a rate-limited queue, pruned past the window. */
export const soniqQueueStarts = sqliteTable(
  "soniq_queue_starts",
  {
    queue: text("queue").notNull(),
    startedAt: ms("started_at").notNull().default(nowMs),
    jobId: text("job_id").notNull(),
  },
  (t) => [primaryKey({ name: "soniq_queue_starts_pkey", columns: [t.queue, t.startedAt, t.jobId] })],
);

/** One row per operator action through the Soniq API. */
export const soniqAuditLog = sqliteTable(
  "soniq_audit_log",
  {
    id: text("id").primaryKey(),
    at: ms("at").notNull().default(nowMs),
    actor: text("actor").notNull(),
    action: text("action").notNull(),
    target: text("target"),
    params: json<Record<string, unknown>>("params"),
    outcome: text("outcome").notNull(),
    details: json<Record<string, unknown>>("details"),
  },
  (t) => [index("idx_soniq_audit_log_at").on(t.at), index("idx_soniq_audit_log_action").on(t.action, t.at)],
);

/** Per-minute counters, written in batches by workers. */
export const soniqMetrics = sqliteTable(
  "soniq_metrics",
  {
    bucketStart: ms("bucket_start").notNull(),
    queue: text("queue").notNull(),
    jobName: text("job_name").notNull(),
    done: integer("done").notNull().default(0),
    failed: integer("failed").notNull().default(0),
    retried: integer("retried").notNull().default(0),
    deadLettered: integer("dead_lettered").notNull().default(0),
    snoozed: integer("snoozed").notNull().default(0),
    runMsSum: real("run_ms_sum").notNull().default(0),
  },
  (t) => [primaryKey({ name: "soniq_metrics_pkey", columns: [t.bucketStart, t.queue, t.jobName] })],
);

/**
 * Workflows (DESIGN.md section 15). A flow row keeps its step counters so a step's change updates the
 * flow's state in O(1); see the `flows` facet (core contract/flows.ts) for the layout and why.
 */
export const soniqFlows = sqliteTable(
  "soniq_flows",
  {
    id: text("id").primaryKey(),
    name: text("name"),
    state: text("state", { enum: FLOW_STATES }).notNull().default("running"),
    createdBy: text("created_by").notNull(),
    stepsTotal: integer("steps_total").notNull().default(0),
    stepsOpen: integer("steps_open").notNull().default(0),
    stepsFailed: integer("steps_failed").notNull().default(0),
    stepsHeld: integer("steps_held").notNull().default(0),
    createdAt: ms("created_at").notNull().default(nowMs),
    finishedAt: ms("finished_at"),
    /** When the `flow.finished` sweep wrote its deliveries (null = not yet, or not finished). */
    notifiedAt: ms("notified_at"),
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
export const soniqFlowSteps = sqliteTable(
  "soniq_flow_steps",
  {
    flowId: text("flow_id")
      .notNull()
      .references(() => soniqFlows.id, { onDelete: "cascade" }),
    ref: text("ref").notNull(),
    seq: integer("seq").notNull(),
    jobId: text("job_id").notNull(),
    jobIds: json<string[]>("job_ids").notNull(),
    jobName: text("job_name").notNull(),
    job: json<Record<string, unknown>>("job").notNull(),
    dependsOn: json<string[]>("depends_on").notNull(),
    dependents: json<string[]>("dependents").notNull(),
    onParentFailure: text("on_parent_failure", { enum: PARENT_FAILURE_POLICIES }).notNull(),
    state: text("state", { enum: FLOW_STEP_STATES }).notNull(),
    pendingParents: integer("pending_parents").notNull(),
    reason: text("reason"),
    addedBy: text("added_by"),
    createdAt: ms("created_at").notNull().default(nowMs),
    finishedAt: ms("finished_at"),
  },
  (t) => [
    primaryKey({ name: "soniq_flow_steps_pkey", columns: [t.flowId, t.ref] }),
    uniqueIndex("idx_soniq_flow_steps_job_id").on(t.jobId),
    check("soniq_flow_steps_state_check", sql`${t.state} in (${sql.raw(sqlList(FLOW_STEP_STATES))})`),
  ],
);

export { soniqJobSignals, soniqJobSteps, soniqWebhookDeliveries, soniqWebhookEndpoints };

export const sqliteSchema = {
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
