/**
 * `@soniq/core`: the app API, what an application uses. Values are what an app calls or compares
 * against; the services behind `soniq.deadLetter`, `soniq.queues`, `soniq.schedules`, `soniq.audit`,
 * `soniq.metrics`, and `Worker`/`Scheduler`, are exported as types only (`Soniq` makes them).
 * Backend authors import `@soniq/core/backend`.
 */

export type { ActorOptions, AuditListFilter, AuditService } from "./audit.js";
export { type Clock, type ClockTimer, type ManualClock, manualClock, systemClock } from "./clock.js";
export type { JobContext } from "./context.js";
export type {
  Backend,
  BackendCapabilities,
  BackendTx,
  EnqueueResult,
  MigrationReport,
} from "./contract/index.js";
export type { DeadLetterService, LineSink, ReplayOverrides } from "./dead-letter.js";
export type { BulkOptions, BulkResult, DeadLetterBulkFilter } from "./dead-letter-bulk.js";
export type { EnqueueManyItem } from "./enqueue-many.js";
export {
  isSoniqError,
  JobAbortedError,
  type JobAbortReason,
  SONIQ_ERROR_CODES,
  SoniqError,
  type SoniqErrorCode,
} from "./errors.js";
export { EXPLAIN_CODES, type ExplainCode, type ExplainReason, type Explanation } from "./explain.js";
export { MAX_FLOW_STEPS, MAX_STEP_PARENTS } from "./flow-steps.js";
export type {
  FlowDefinition,
  FlowService,
  ListFlowsFilter,
  StartedFlow,
  StartFlowOptions,
  WaitForFlowOptions,
} from "./flows.js";
export type { Handler, JobDefinition, JobResult } from "./jobs.js";
export { DEFAULT_HEARTBEAT_INTERVAL_MS, DEFAULT_STALE_AFTER_MS, suspectAfterMs } from "./liveness.js";
export type { LogFn, Logger } from "./logger.js";
export type { ClaimEvent, JobEndEvent, JobEndStatus, JobStartEvent, MetricsSink } from "./metrics.js";
export type { MetricsPoint, MetricsSeriesFilter, MetricsService } from "./metrics-series.js";
export type { Hooks, Middleware, Next, Plugin } from "./middleware.js";
export type { MigrationsApi } from "./migrations.js";
export { isValidJobName, JOB_NAME_PATTERN } from "./names.js";
export type { OptionDoc } from "./option-table.js";
export type {
  EnqueueOptions as JobEnqueueOptions,
  JobOptions,
  ResolvedJobOptions,
  ResolvedSoniqOptions,
  SoniqOptions,
} from "./options.js";
export { describeOptions } from "./options.js";
export { isPermanentError, isSnooze, PermanentError, type Snooze, snooze } from "./outcomes.js";
export { MAX_PROGRESS_BYTES, progressPercent } from "./progress.js";
export type { DeadLetterFilter, DeadLetterPosition, JobPosition, ListJobsFilter } from "./queries.js";
export { durationWords, type QueueStateWord, queueLimitsText, queueStateWord } from "./queue-words.js";
export {
  EXACT_COUNTS_UP_TO,
  type QueueConfig,
  type QueueControlOptions,
  type QueueService,
} from "./queues.js";
export {
  REDACTED,
  type RedactableRow,
  type RedactContext,
  type RedactField,
  type RedactFunction,
  type RedactOption,
  type Redactor,
} from "./redact.js";
export type { ReplicationStatus } from "./replication.js";
export type { EnqueueHandle, JobOutcome, WaitForOptions } from "./results.js";
export type {
  BackoffRetry,
  ListRetry,
  RetryContext,
  RetryFunction,
  RetryPolicy,
} from "./retry-policy.js";
export type { PeriodicDeclaration, PeriodicOptions } from "./schedules/declare.js";
export type { CheckReport, Scheduler, SchedulerOptions } from "./schedules/scheduler.js";
export type { ScheduleService } from "./schedules/service.js";
export type { WorkerScheduleOptions } from "./schedules/worker.js";
export { SHORT_ID_LENGTH, shortId } from "./short-id.js";
export { Soniq } from "./soniq.js";
export {
  type ProducerHook,
  type RunOutcome,
  type RunOutcomeKind,
  type SendEvent,
  type SendOrigin,
  type SentJob,
  traceIdOf,
} from "./tracing.js";
export type {
  WebhookDelivery,
  WebhookDeliveryEvent,
  WebhookDeliveryStatus,
  WebhookEndpoint,
  WebhookEvent,
  WebhookPayload,
  WebhookRetry,
} from "./types.js";
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
} from "./types.js";
export { SONIQ_VERSION } from "./version.js";
export type { WebhookRegistration, WebhookUpdate } from "./webhooks/input.js";
export type { WebhookOptions } from "./webhooks/options.js";
export type { WebhookDeliveryFilter, WebhookService, WebhookTestResult } from "./webhooks/service.js";
export {
  DEFAULT_SIGNATURE_TOLERANCE_MS,
  type VerifyWebhookSignatureInput,
  verifyWebhookSignature,
} from "./webhooks/signature.js";
export type { Worker, WorkerEvents, WorkerState } from "./worker/worker.js";
export type { ResolvedWorkerOptions, WorkerOptions } from "./worker-options.js";
export {
  WORKER_LIVENESS,
  type WorkerListOptions,
  type WorkerLiveness,
  type WorkersApi,
  type WorkerView,
  workerCounts,
} from "./workers.js";
