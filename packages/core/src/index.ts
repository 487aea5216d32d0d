// The app API. Backend authors import the contract from `@soniq/core/backend`.

export {
  type ActorOptions,
  type AuditListFilter,
  AuditService,
  actorOf,
  audited,
  auditRecord,
  DEFAULT_ACTOR,
} from "./audit.js";
export type { Backend, BackendCapabilities, BackendTx, EnqueueResult, MigrationReport } from "./backend.js";
export type { JobContext } from "./context.js";
export { DeadLetterService, type LineSink, type ReplayOverrides } from "./dead-letter.js";
export type { BulkOptions, BulkResult, DeadLetterBulkFilter } from "./dead-letter-bulk.js";
export {
  isSoniqError,
  JobAbortedError,
  type JobAbortReason,
  SONIQ_ERROR_CODES,
  SoniqError,
  type SoniqErrorCode,
  type SoniqErrorOptions,
} from "./errors.js";
export { EXPLAIN_CODES, type ExplainCode, type ExplainReason, type Explanation } from "./explain.js";
export type { Handler, JobDefinition, JobResult } from "./jobs.js";
export { argsHash, canonicalJson } from "./json.js";
export { type LogFn, type Logger, silentLogger } from "./logger.js";
export {
  type ClaimEvent,
  type JobEndEvent,
  type JobEndStatus,
  type JobStartEvent,
  type MetricsSink,
  noopMetricsSink,
} from "./metrics.js";
export {
  METRICS_RETENTION_MS,
  type MetricsPoint,
  type MetricsSeriesFilter,
  MetricsService,
} from "./metrics-series.js";
export type { Hooks, Middleware, Next, Plugin } from "./middleware.js";
export { isValidJobName, JOB_NAME_PATTERN } from "./names.js";
export type { OptionDoc } from "./option-table.js";
export type {
  EnqueueOptions as JobEnqueueOptions,
  JobOptions,
  ResolvedJobOptions,
  ResolvedSoniqOptions,
  ResolvedWorkerOptions,
  SoniqOptions,
  WorkerOptions,
} from "./options.js";
export { describeOptions } from "./options.js";
export { isPermanentError, isSnooze, PermanentError, type Snooze, snooze } from "./outcomes.js";
export type { DeadLetterFilter, DeadLetterPosition, JobPosition, ListJobsFilter } from "./queries.js";
export { EXACT_COUNTS_UP_TO, type QueueConfig, QueueService } from "./queues.js";
export type { ReplicationStatus } from "./replication.js";
export {
  type BackoffRetry,
  computeRetryDelay,
  DEFAULT_RETRY,
  type ListRetry,
  type RetryContext,
  type RetryFunction,
  type RetryPolicy,
} from "./retry-policy.js";
export {
  type Clock,
  type ClockTimer,
  type ManualClock,
  manualClock,
  systemClock,
} from "./schedules/clock.js";
export type { PeriodicDeclaration, PeriodicOptions } from "./schedules/declare.js";
export {
  type CheckReport,
  SCHEDULER_LEASE,
  Scheduler,
  type SchedulerOptions,
} from "./schedules/scheduler.js";
export { ScheduleService } from "./schedules/service.js";
export {
  type CatchUpPolicy,
  type Schedule,
  type ScheduleTick,
  TICK_OUTCOMES,
  type TickOutcome,
} from "./schedules/types.js";
export type { WorkerScheduleOptions } from "./schedules/worker.js";
export { JOB_DEFAULTS, JOB_STATUS_CHECK, TABLES } from "./schema/constants.js";
export { type EnqueueManyItem, Soniq } from "./soniq.js";
export {
  AUDIT_ACTIONS,
  type AuditAction,
  type AuditEntry,
  DEAD_LETTER_REASONS,
  type DeadLetterJob,
  type DeadLetterJobRow,
  type DeadLetterReason,
  ESTIMABLE_COUNTS,
  type EstimableCount,
  JOB_STATUSES,
  type Job,
  type JobRow,
  type JobStatus,
  type JsonValue,
  type QueueInfo,
  type QueueSettings,
  type QueueStats,
  type RateLimit,
  TERMINAL_JOB_STATUSES,
  WORKER_STATUSES,
  type WorkerInfo,
  type WorkerStatus,
} from "./types.js";
export { SONIQ_VERSION } from "./version.js";
export { MAX_ERROR_LENGTH } from "./worker/runner.js";
export { Worker, type WorkerEvents, type WorkerState } from "./worker/worker.js";
