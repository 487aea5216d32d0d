/**
 * `@soniq/core/backend`: the contract for backend authors (and the testkit). Apps import `@soniq/core`.
 * Types and the facet list come from `backend.ts`; the guard and the query normalisers are what core
 * runs in front of every backend, exported so a backend's own tests can use the same ones.
 */

export { actorOf, audited, auditListQuery, auditRecord } from "./audit.js";
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
} from "./backend.js";
export { isSoniqError, SoniqError, type SoniqErrorCode, type SoniqErrorOptions } from "./errors.js";
export { guardBackend, unwrapBackend } from "./guard.js";
export { newJobId } from "./ids.js";
export {
  DEFAULT_PAGE_SIZE,
  type DeadLetterFilter,
  type DeadLetterPosition,
  deadLetterListQuery,
  deadLetterMatch,
  inListOrder,
  type JobPosition,
  jobListQuery,
  type ListJobsFilter,
  MAX_PAGE_SIZE,
  statsQuery,
} from "./queries.js";
export { EXACT_COUNTS_UP_TO, queueInfo } from "./queues.js";
export type { ReplicationStatus, ReplicationStatusMethod } from "./replication.js";
export {
  fromStoredTiming,
  recurringStatus,
  resolveTick,
  SCHEDULE_COLUMNS,
  type StoredTiming,
  TICK_COLUMNS,
  toStoredTiming,
  triggerAudit,
  triggeredJobId,
} from "./schedules/stored.js";
