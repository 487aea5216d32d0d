/**
 * `@soniq/core`: the app API, what an application uses: the `Soniq` class, the values a handler states
 * intent with (`PermanentError`, `snooze`), the error model, the value sets an app compares against, and the
 * types of the options, rows and results the nouns (`soniq.jobs`, `soniq.deadLetters`, ...) take and return.
 * Nothing here is for presentation or tests. Other readers have their own entries:
 * - `@soniq/core/plugin`: plugin and middleware authors (producer and outcome hooks, metrics sinks);
 * - `@soniq/core/backend`: backend authors (the contract, the interpreters a backend calls);
 * - `@soniq/core/ops`: operator surfaces (the CLI, the dashboard, the MCP server): short ids, wording;
 * - `@soniq/testkit`: test helpers (`manualClock`, `newJob`) and the conformance suite.
 */

export type {
  EnqueueOptions,
  JobOptions,
  SoniqOptions,
} from "./app/options.js";
export type { Middleware, Plugin } from "./app/plugins.js";
export { Soniq } from "./app/soniq.js";
export type { Clock } from "./common/clock.js";
export {
  isSoniqError,
  JobAbortedError,
  SONIQ_ERROR_CODES,
  SoniqError,
  type SoniqErrorCode,
} from "./common/errors.js";
export { isJobId } from "./common/ids.js";
export type { Logger } from "./common/logger.js";
export {
  AUDIT_ACTIONS,
  type AuditAction,
  type AuditEntry,
  DEAD_LETTER_REASONS,
  type DeadLetterJob,
  type DeadLetterReason,
  FLOW_STATES,
  FLOW_STEP_STATES,
  type Flow,
  type FlowState,
  type FlowStep,
  type FlowStepDefinition,
  type FlowSummary,
  JOB_STATUSES,
  type Job,
  type JobStatus,
  type JobStep,
  type JsonValue,
  type QueueInfo,
  type QueueSettings,
  type QueueStats,
  type RateLimit,
  type Schedule,
  type ScheduleTick,
  WEBHOOK_DELIVERY_STATUSES,
  WEBHOOK_EVENTS,
  type WebhookDelivery,
  type WebhookDeliveryStatus,
  type WebhookEndpoint,
  type WebhookEvent,
  type WebhookPayload,
} from "./common/types.js";
export type { Backend, BackendTx, MigrationReport, MigrationStatus } from "./contract/index.js";
export type { BulkOptions, BulkResult, DeadLetterBulkFilter } from "./dead-letters/bulk.js";
export type { ReplayOptions } from "./dead-letters/service.js";
export type { FlowDefinition, ListFlowsFilter, StartedFlow } from "./flows/service.js";
export type { JobContext } from "./jobs/context.js";
export type { Handler, JobDefinition } from "./jobs/definition.js";
export type { EnqueueManyItem } from "./jobs/enqueue-many.js";
export { EXPLAIN_CODES, type ExplainCode, type Explanation } from "./jobs/explain.js";
export { PermanentError, snooze } from "./jobs/outcomes.js";
export type { DeadLetterFilter, ListJobsFilter } from "./jobs/queries.js";
export type { EnqueueHandle, JobOutcome, WaitForOptions } from "./jobs/results.js";
export type { RetryContext, RetryPolicy } from "./jobs/retry-policy.js";
export type { SignalOptions, SignalSent } from "./jobs/service.js";
export type { UpgradeOptions, UpgradeResult } from "./jobs/upgrade.js";
export type { ActorOptions, AuditListFilter } from "./observability/audit.js";
export { REDACTED, type RedactOption } from "./observability/redact.js";
export type { ReplicationStatus } from "./observability/replication.js";
export type { MetricsPoint, MetricsSeriesFilter } from "./observability/series.js";
export type { QueueConfig } from "./queues/service.js";
export type { ScheduleSpec } from "./schedules/declare.js";
export type { Scheduler, SchedulerOptions } from "./schedules/scheduler.js";
export type { WorkerScheduleOptions } from "./schedules/worker.js";
export type { WebhookRegistration, WebhookUpdate } from "./webhooks/input.js";
export type { WebhookOptions } from "./webhooks/options.js";
export type { WebhookDeliveryFilter } from "./webhooks/service.js";
export { verifyWebhookSignature } from "./webhooks/signature.js";
export type { WorkerOptions } from "./worker/options.js";
export type { WorkerView } from "./worker/service.js";
export type { Worker } from "./worker/worker.js";
