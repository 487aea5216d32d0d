/**
 * Names and value sets shared by every dialect's schema and by the backends.
 * Table, column and constraint names are part of Soniq's public contract: operators query them.
 */

/** The four values `soniq_jobs.status` may take. `dead_letter` is deliberately not one of them. */
export const JOB_STATUSES = ["queued", "processing", "done", "cancelled"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** Statuses a job never leaves once it reaches them. */
export const TERMINAL_JOB_STATUSES = ["done", "cancelled"] as const satisfies readonly JobStatus[];

export const WORKER_STATUSES = ["active", "stopping", "stopped"] as const;
export type WorkerStatus = (typeof WORKER_STATUSES)[number];

export const RECURRING_STATUSES = ["active", "paused"] as const;
export type RecurringStatus = (typeof RECURRING_STATUSES)[number];

export const SCHEDULE_TYPES = ["cron", "interval"] as const;
export type ScheduleType = (typeof SCHEDULE_TYPES)[number];

/** What became of a schedule's tick (`soniq_schedule_ticks.outcome`); see src/types.ts. */
export const TICK_OUTCOMES = ["fired", "skipped", "missed", "deduplicated"] as const;
export type TickOutcome = (typeof TICK_OUTCOMES)[number];

export const DEAD_LETTER_REASONS = [
  "max_retries_exceeded",
  "permanent_failure",
  "job_not_found",
  "invalid_arguments",
] as const;
export type DeadLetterReason = (typeof DEAD_LETTER_REASONS)[number];

/** A workflow's states (`soniq_flows.state`); see DESIGN.md section 15. */
export const FLOW_STATES = ["running", "held", "succeeded", "failed", "cancelled"] as const;
export type FlowState = (typeof FLOW_STATES)[number];

/** Flow states that never change again. */
export const TERMINAL_FLOW_STATES = [
  "succeeded",
  "failed",
  "cancelled",
] as const satisfies readonly FlowState[];

/**
 * A flow step's states. `queued` and `processing` are its job's; the step row stores `queued` for both
 * (the claim never touches a step row) and reads resolve it against the job.
 */
export const FLOW_STEP_STATES = [
  "waiting",
  "queued",
  "processing",
  "done",
  "dead_lettered",
  "held",
  "cancelled",
] as const;
export type FlowStepState = (typeof FLOW_STEP_STATES)[number];

/** A durable checkpoint's kinds and states (`soniq_job_steps`, DESIGN.md section 19). */
export const JOB_STEP_KINDS = ["step", "sleep", "signal"] as const;
export const JOB_STEP_STATES = ["done", "failed", "waiting", "timed_out"] as const;

/** What a step does when a parent is dead-lettered (or cancelled): see DESIGN.md section 15. */
export const PARENT_FAILURE_POLICIES = ["hold", "cancel", "run"] as const;
export type ParentFailurePolicy = (typeof PARENT_FAILURE_POLICIES)[number];

export const TABLES = {
  jobs: "soniq_jobs",
  deadLetterJobs: "soniq_dead_letter_jobs",
  workers: "soniq_workers",
  taskRegistry: "soniq_task_registry",
  recurringJobs: "soniq_recurring_jobs",
  scheduleTicks: "soniq_schedule_ticks",
  leases: "soniq_leases",
  queues: "soniq_queues",
  queueStarts: "soniq_queue_starts",
  auditLog: "soniq_audit_log",
  metrics: "soniq_metrics",
  flows: "soniq_flows",
  flowSteps: "soniq_flow_steps",
  webhookEndpoints: "soniq_webhook_endpoints",
  webhookDeliveries: "soniq_webhook_deliveries",
} as const;

/** The values `soniq_webhook_deliveries.status` may take (see `WEBHOOK_DELIVERY_STATUSES` in types.ts). */
export const DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;

export const JOB_DEFAULTS = {
  maxAttempts: 3,
  queue: "default",
  priority: 100,
} as const;

/** Name of the CHECK constraint on `soniq_jobs.status` in both SQL dialects. */
export const JOB_STATUS_CHECK = "soniq_jobs_status_check";

/** `'a', 'b'` list for CHECK constraints. Values are compile-time constants, never user input. */
export function sqlList(values: readonly string[]): string {
  return values.map((v) => `'${v}'`).join(", ");
}
