// The backend contract, facet by facet (each file one facet; `backend.ts` assembles them).

export type { AuditFacet, AuditListQuery, AuditRecord } from "./audit.js";
export {
  BACKEND_CAPABILITIES,
  BACKEND_FACETS,
  type Backend,
  type BackendCapabilities,
  type BackendCapability,
  type BackendFacetName,
  type BackendTx,
  type CapabilityFacetName,
  CORE_FACETS,
  type CompleteBackend,
  type GuardedBackend,
} from "./backend.js";
export type {
  DeadLetterListQuery,
  DeadLetterMatch,
  DeadLettersFacet,
  ReplayRequest,
} from "./dead-letters.js";
export type {
  FlowCancelResult,
  FlowListQuery,
  FlowSettlement,
  FlowStepMatch,
  FlowsFacet,
  NewFlow,
  NewFlowStep,
} from "./flows.js";
export type {
  EnqueueOptions,
  EnqueueResult,
  JobListQuery,
  JobsFacet,
  ListPosition,
  NewJob,
  StatsQuery,
} from "./jobs.js";
export type { LeasesFacet, LeaseTakeOver } from "./leases.js";
export type { MetricsFacet, MetricsListQuery, MetricsRow } from "./metrics.js";
export type { MigrationReport, MigrationStatus, MigrationsFacet } from "./migrations.js";
export type { QueueConfigPatch, QueueListQuery, QueuesFacet, RecentStarts } from "./queues.js";
export type { ReplicationStatus, ReplicationStatusMethod } from "./replication.js";
export type {
  ClaimCap,
  ClaimRequest,
  ClaimResult,
  DeadLetterSettlement,
  DoneSettlement,
  JobRef,
  ProgressUpdate,
  RequeueSettlement,
  RunsFacet,
  Settlement,
} from "./runs.js";
export type { ScheduleDeclaration, SchedulesFacet, TickRecord, TickRecordResult } from "./schedules.js";
export type {
  ReplaySteps,
  SignalRequest,
  SignalResult,
  StepRef,
  StepsFacet,
  StepWrite,
  WaitRequest,
  WaitResult,
} from "./steps.js";
export type {
  ArgsRewrite,
  OutdatedArgs,
  OutdatedPage,
  OutdatedQuery,
  VersionedTable,
  VersionsFacet,
} from "./versions.js";
export type { FinishedListener, WakeUpListener, WakeUpsFacet } from "./wake-ups.js";
export type {
  DeliveryAttemptResult,
  DeliveryClaimRequest,
  EndpointWriteGuard,
  NewWebhookDelivery,
  PendingDeliveryCount,
  StoredWebhookEndpoint,
  WebhookDeliveryQuery,
  WebhookEndpointPatch,
  WebhooksFacet,
} from "./webhooks.js";
export type {
  ProcessingJob,
  StaleRecovery,
  TaskNameRow,
  TaskRegistration,
  WorkerRegistration,
  WorkersFacet,
} from "./workers.js";
