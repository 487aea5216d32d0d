/**
 * `@soniq/core`: the app API, what an application uses. Values are what an app calls or compares
 * against; the services behind `soniq.deadLetter`, `soniq.queues`, `soniq.schedules`, `soniq.audit`,
 * `soniq.metrics`, and `Worker`/`Scheduler`, are exported as types only (`Soniq` makes them).
 * Backend authors import `@soniq/core/backend`.
 */

export type { MigrationsApi } from "./app/migrations.js";
export type {
  EnqueueOptions as JobEnqueueOptions,
  JobOptions,
  ResolvedJobOptions,
  ResolvedSoniqOptions,
  SoniqOptions,
} from "./app/options.js";
export { describeOptions } from "./app/options.js";
export type { Hooks, Middleware, Next, Plugin } from "./app/plugins.js";
export { Soniq } from "./app/soniq.js";
export { type Clock, type ClockTimer, type ManualClock, manualClock, systemClock } from "./common/clock.js";
export {
  isSoniqError,
  JobAbortedError,
  type JobAbortReason,
  SONIQ_ERROR_CODES,
  SoniqError,
  type SoniqErrorCode,
} from "./common/errors.js";
export type { LogFn, Logger } from "./common/logger.js";
export { isValidJobName, JOB_NAME_PATTERN } from "./common/names.js";
export type { OptionDoc } from "./common/option-table.js";
export type {
  WebhookDelivery,
  WebhookDeliveryEvent,
  WebhookDeliveryStatus,
  WebhookEndpoint,
  WebhookEvent,
  WebhookPayload,
  WebhookRetry,
} from "./common/types.js";
export {
  AUDIT_ACTIONS,
  type AuditAction,
  type AuditEntry,
  type CatchUpPolicy,
  DEAD_LETTER_REASONS,
  type DeadLetterJob,
  type DeadLetterReason,
  ESTIMABLE_COUNTS,
  type EstimableCount,
  FLOW_STATES,
  FLOW_STEP_STATES,
  type Flow,
  type FlowContext,
  type FlowCounts,
  type FlowState,
  type FlowStep,
  type FlowStepDefinition,
  type FlowStepOptions,
  type FlowStepReason,
  type FlowStepState,
  type FlowSummary,
  JOB_STATUSES,
  type Job,
  type JobStatus,
  type JsonValue,
  PARENT_FAILURE_POLICIES,
  type ParentFailurePolicy,
  type ParentOutcome,
  type QueueInfo,
  type QueueSettings,
  type QueueStats,
  type RateLimit,
  type Schedule,
  type ScheduleTick,
  TERMINAL_FLOW_STATES,
  TERMINAL_JOB_STATUSES,
  TICK_OUTCOMES,
  type TickOutcome,
  type TraceContext,
  WEBHOOK_DELIVERY_STATUSES,
  WEBHOOK_EVENTS,
  WORKER_STATUSES,
  type WorkerInfo,
  type WorkerStatus,
} from "./common/types.js";
export { SONIQ_VERSION } from "./common/version.js";
export type {
  Backend,
  BackendCapabilities,
  BackendTx,
  EnqueueResult,
  MigrationReport,
} from "./contract/index.js";
export type { BulkOptions, BulkResult, DeadLetterBulkFilter } from "./dead-letters/bulk.js";
export type { DeadLetterService, LineSink, ReplayOverrides } from "./dead-letters/service.js";
export type {
  FlowDefinition,
  FlowService,
  ListFlowsFilter,
  StartedFlow,
  StartFlowOptions,
  WaitForFlowOptions,
} from "./flows/service.js";
export { MAX_FLOW_STEPS, MAX_STEP_PARENTS } from "./flows/steps.js";
export type { JobContext } from "./jobs/context.js";
export type { Handler, JobDefinition, JobResult } from "./jobs/definition.js";
export type { EnqueueManyItem } from "./jobs/enqueue-many.js";
export { EXPLAIN_CODES, type ExplainCode, type ExplainReason, type Explanation } from "./jobs/explain.js";
export { isPermanentError, isSnooze, PermanentError, type Snooze, snooze } from "./jobs/outcomes.js";
export { MAX_PROGRESS_BYTES, progressPercent } from "./jobs/progress.js";
export type { DeadLetterFilter, DeadLetterPosition, JobPosition, ListJobsFilter } from "./jobs/queries.js";
export type { EnqueueHandle, JobOutcome, WaitForOptions } from "./jobs/results.js";
export type {
  BackoffRetry,
  ListRetry,
  RetryContext,
  RetryFunction,
  RetryPolicy,
} from "./jobs/retry-policy.js";
export type { ActorOptions, AuditListFilter, AuditService } from "./observability/audit.js";
export {
  REDACTED,
  type RedactableRow,
  type RedactContext,
  type RedactField,
  type RedactFunction,
  type RedactOption,
  type Redactor,
} from "./observability/redact.js";
export type { ReplicationStatus } from "./observability/replication.js";
export type { MetricsPoint, MetricsSeriesFilter, MetricsService } from "./observability/series.js";
export type {
  ClaimEvent,
  JobEndEvent,
  JobEndStatus,
  JobStartEvent,
  MetricsSink,
} from "./observability/sink.js";
export {
  type ProducerHook,
  type RunOutcome,
  type RunOutcomeKind,
  type SendEvent,
  type SendOrigin,
  type SentJob,
  traceIdOf,
} from "./observability/tracing.js";
export { durationWords, type QueueStateWord, queueLimitsText, queueStateWord } from "./ops/queue-words.js";
export { SHORT_ID_LENGTH, shortId } from "./ops/short-id.js";
export {
  EXACT_COUNTS_UP_TO,
  type QueueConfig,
  type QueueControlOptions,
  type QueueService,
} from "./queues/service.js";
export type { PeriodicDeclaration, PeriodicOptions } from "./schedules/declare.js";
export type { CheckReport, Scheduler, SchedulerOptions } from "./schedules/scheduler.js";
export type { ScheduleService } from "./schedules/service.js";
export type { WorkerScheduleOptions } from "./schedules/worker.js";
export type { WebhookRegistration, WebhookUpdate } from "./webhooks/input.js";
export type { WebhookOptions } from "./webhooks/options.js";
export type { WebhookDeliveryFilter, WebhookService, WebhookTestResult } from "./webhooks/service.js";
export {
  DEFAULT_SIGNATURE_TOLERANCE_MS,
  type VerifyWebhookSignatureInput,
  verifyWebhookSignature,
} from "./webhooks/signature.js";
export { DEFAULT_HEARTBEAT_INTERVAL_MS, DEFAULT_STALE_AFTER_MS, suspectAfterMs } from "./worker/liveness.js";
export type { ResolvedWorkerOptions, WorkerOptions } from "./worker/options.js";
export {
  WORKER_LIVENESS,
  type WorkerListOptions,
  type WorkerLiveness,
  type WorkersApi,
  type WorkerView,
  workerCounts,
} from "./worker/service.js";
export type { Worker, WorkerEvents, WorkerState } from "./worker/worker.js";
