/**
 * `@soniq/core/backend`: what a backend author (and the testkit) uses, so one import suffices: the contract
 * facet by facet, the rows and words it speaks in, the errors a backend throws, and the helpers core runs in
 * front of every backend or hands to it (the guard, the query normalisers, the rules of stored schedules).
 * Apps import `@soniq/core`.
 */

export { auditListQuery, auditRecord } from "./audit.js";
export {
  type AuditFacet,
  type AuditListQuery,
  type AuditRecord,
  BACKEND_FACETS,
  type Backend,
  type BackendCapabilities,
  type BackendFacetName,
  type BackendTx,
  type ClaimCap,
  type ClaimRequest,
  type ClaimResult,
  type DeadLetterListQuery,
  type DeadLetterMatch,
  type DeadLetterSettlement,
  type DeadLettersFacet,
  type DoneSettlement,
  type EnqueueOptions,
  type EnqueueResult,
  type JobListQuery,
  type JobRef,
  type JobsFacet,
  type LeasesFacet,
  type LeaseTakeOver,
  type ListPosition,
  type MetricsFacet,
  type MetricsListQuery,
  type MetricsRow,
  type MigrationReport,
  type MigrationStatus,
  type MigrationsFacet,
  type NewJob,
  type QueueConfigPatch,
  type QueueListQuery,
  type QueuesFacet,
  type RecentStarts,
  type ReplayRequest,
  type RequeueSettlement,
  type RunsFacet,
  type ScheduleDeclaration,
  type SchedulesFacet,
  type Settlement,
  type StaleRecovery,
  type StatsQuery,
  type TaskNameRow,
  type TickRecord,
  type TickRecordResult,
  type WakeUpListener,
  type WakeUpsFacet,
  type WorkerRegistration,
  type WorkersFacet,
} from "./contract/index.js";

export {
  isSoniqError,
  SONIQ_ERROR_CODES,
  SoniqError,
  type SoniqErrorCode,
  type SoniqErrorOptions,
} from "./errors.js";

export { guardBackend, unwrapBackend } from "./guard.js";
export { newJobId } from "./ids.js";
export {
  DEFAULT_PAGE_SIZE,
  type DeadLetterFilter,
  deadLetterListQuery,
  deadLetterMatch,
  jobListQuery,
  type ListJobsFilter,
  MAX_PAGE_SIZE,
  statsQuery,
} from "./queries.js";
export { EXACT_COUNTS_UP_TO, queueInfo } from "./queues.js";
export {
  fromStoredTiming,
  recurringStatus,
  resolveTick,
  SCHEDULE_COLUMNS,
  type StoredTiming,
  TICK_COLUMNS,
  toStoredTiming,
  triggerAudit,
} from "./schedules/stored.js";
export {
  type AuditAction,
  type AuditEntry,
  type CatchUpPolicy,
  DEAD_LETTER_REASONS,
  type DeadLetterJob,
  type DeadLetterReason,
  ESTIMABLE_COUNTS,
  type EstimableCount,
  JOB_STATUSES,
  type Job,
  type JobStatus,
  type QueueInfo,
  type QueueSettings,
  type QueueStats,
  type RateLimit,
  type Schedule,
  type ScheduleTick,
  TERMINAL_JOB_STATUSES,
  TICK_OUTCOMES,
  type TickOutcome,
  WORKER_STATUSES,
  type WorkerInfo,
  type WorkerStatus,
} from "./types.js";
