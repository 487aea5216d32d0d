/**
 * The Backend contract, grouped by facet: what the worker and the app need from storage, and nothing
 * about SQL. This folder declares one file per facet and this file assembles them into `Backend`. Every
 * backend implements it with the same files (`src/<facet>.ts`); `@soniq/testkit` certifies it. Backend
 * authors import it from `@soniq/core/backend`.
 *
 * Core wraps every backend with `guardBackend`, which validates and normalises every input once
 * (ids, filters, paging, dates, delays) and gives the lifecycle guarantees (migrations once, typed error
 * after close, memoised close). A backend therefore trusts its inputs: filters arrive complete
 * (`null` = no filter), limits and offsets are always present and in range, ids are lower-case strings.
 *
 * Rules that are the same everywhere live in core, not here: what a retry, snooze or nack writes to
 * `attempts` and `last_error` (core sends the values; see `Settlement`), dead-lettering a job claimed past
 * its `max_attempts` (core settles it as `dead_letter` before running it), paging defaults, the text of
 * `last_error`.
 *
 * Conventions every implementation keeps:
 * - An id that names no row means "not found": reads return null, writes return false. Never throw for that.
 * - Worker-side writes (`runs.settle`) are fenced by (id, attempt): they apply only while the row is
 *   `processing` with the `attempts` the claim gave it, so a late write after cancel, recovery or a
 *   re-claim is a no-op (reported as not applied).
 * - Every requeue (retry, snooze, nack, recovery) clears `worker_id`.
 * - Time comparisons (due jobs, heartbeats, expiry, leases) use the backend's own clock (the database's
 *   `now()` for SQL backends). Relative delays are passed as milliseconds for that reason.
 * - Writing a status outside the four, or changing a done/cancelled job's status, fails with
 *   `SONIQ_INVALID_STATUS_TRANSITION` and changes nothing (the SQL backends' storage enforces it too).
 */

import type { AuditFacet } from "./audit.js";
import type { DeadLettersFacet } from "./dead-letters.js";
import type { FlowsFacet } from "./flows.js";
import type { JobsFacet } from "./jobs.js";
import type { LeasesFacet } from "./leases.js";
import type { MetricsFacet } from "./metrics.js";
import type { MigrationsFacet } from "./migrations.js";
import type { QueuesFacet } from "./queues.js";
import type { ReplicationStatusMethod } from "./replication.js";
import type { RunsFacet } from "./runs.js";
import type { SchedulesFacet } from "./schedules.js";
import type { StepsFacet } from "./steps.js";
import type { VersionsFacet } from "./versions.js";
import type { WakeUpsFacet } from "./wake-ups.js";
import type { WebhooksFacet } from "./webhooks.js";
import type { WorkersFacet } from "./workers.js";

export interface BackendCapabilities {
  /** Wake-ups reach workers in other processes (Postgres LISTEN/NOTIFY). Without it core polls. */
  readonly notify: boolean;
  /** `jobs.enqueue`/`enqueueMany` accept `tx` and write inside the caller's transaction. */
  readonly transactionalEnqueue: boolean;
  /** Leases are enforced across processes by the database (advisory locks or lease rows). */
  readonly advisoryLocks: boolean;
  /** Several processes can share this backend's storage (false for memory). */
  readonly multiProcess: boolean;
}

/**
 * A backend: the core facets every backend implements (migrations, jobs, runs, dead letters, workers, leases,
 * wake-ups), and the capabilities it declares by implementing their facet (flows, webhooks, the schedules'
 * ledger, queue controls, the audit log, metrics series) or method (`runs.reportProgress`: progress). A third
 * party starts with the core facets, certifies them with `@soniq/testkit`, and grows into the rest: the app
 * refuses a feature the backend lacks with `SONIQ_UNSUPPORTED` naming the capability, and the testkit
 * certifies a capability's cases only when it is declared.
 */
export interface Backend<TTx = never> {
  readonly name: string;
  readonly capabilities: BackendCapabilities;
  readonly migrations: MigrationsFacet;
  readonly jobs: JobsFacet<TTx>;
  readonly runs: RunsFacet;
  readonly deadLetters: DeadLettersFacet;
  readonly workers: WorkersFacet;
  readonly leases: LeasesFacet;
  readonly wakeUps: WakeUpsFacet;
  /** Capability `schedules`: stored schedules and their tick ledger. */
  readonly schedules?: SchedulesFacet;
  /** Capability `queues`: pause, resume, concurrency and rate limits. */
  readonly queues?: QueuesFacet;
  /** Capability `audit`: the operator actions' log. */
  readonly audit?: AuditFacet;
  /** Capability `metrics`: persisted metrics series. */
  readonly metrics?: MetricsFacet;
  /** Capability `flows`: workflows of dependent steps. */
  readonly flows?: FlowsFacet<TTx>;
  /** Capability `webhooks`: endpoints and the delivery outbox. */
  readonly webhooks?: WebhooksFacet;
  /** Capability `steps`: durable steps inside a job (checkpoints, sleeps, signals). */
  readonly steps?: StepsFacet<TTx>;
  /** Capability `versions`: the rows whose args are older than their job's version, and their rewrite. */
  readonly versions?: VersionsFacet;
  /** Optional: where the operator's reads go and the replica's lag (core's replication.ts). */
  readonly replicationStatus?: ReplicationStatusMethod;
  /** Release what the backend owns (never a pool or database handed to it). */
  close(): Promise<void>;
}

/** The transaction handle type a backend accepts. */
export type BackendTx<B> = B extends Backend<infer T> ? T : never;

/*
 * The one fault hook has one name on every backend: `interruptDeadLetterMove`, given to the builder of each
 * backend's `/testing` entry (`memoryBackendWithFaults`, `sqliteBackendWithFaults`, `postgresBackendWithFaults`;
 * never in a production entry), consulted before a dead-letter move; when it says so, the move fails between its two steps
 * (dead-letter row inserted, job row not yet deleted), as a dropped connection would, so the call rejects
 * and nothing changed. Its argument and return value are the backend's own (Postgres kills a connection).
 */

/** The facets every backend implements. */
export const CORE_FACETS = [
  "migrations",
  "jobs",
  "runs",
  "deadLetters",
  "workers",
  "leases",
  "wakeUps",
] as const;

/** The capabilities a backend declares: each optional facet by its name, and `progress` (`runs.reportProgress`). */
export const BACKEND_CAPABILITIES = [
  "flows",
  "webhooks",
  "schedules",
  "queues",
  "audit",
  "metrics",
  "progress",
  "steps",
  "versions",
] as const;
export type BackendCapability = (typeof BACKEND_CAPABILITIES)[number];

/** A facet that is a capability. */
export type CapabilityFacetName = Exclude<BackendCapability, "progress">;

/** A backend that implements every capability facet (the three backends here do, and `runs.reportProgress`). */
export type CompleteBackend<TTx = never> = Omit<Backend<TTx>, CapabilityFacetName> & {
  readonly schedules: SchedulesFacet;
  readonly queues: QueuesFacet;
  readonly audit: AuditFacet;
  readonly metrics: MetricsFacet;
  readonly flows: FlowsFacet<TTx>;
  readonly webhooks: WebhooksFacet;
  readonly steps: StepsFacet<TTx>;
  readonly versions: VersionsFacet;
};

/**
 * What core works with: a guarded backend (`guardBackend`), every facet present. A capability the backend does
 * not declare is a facet whose methods reject with `SONIQ_UNSUPPORTED`; `supports()` says which are declared,
 * so background work (metrics, webhook delivery, flow release) skips what is not there.
 */
export type GuardedBackend<TTx = never> = Omit<CompleteBackend<TTx>, "runs"> & {
  readonly runs: RunsFacet & Required<Pick<RunsFacet, "reportProgress">>;
  /** Whether the backend declares this capability. */
  supports(capability: BackendCapability): boolean;
};

/**
 * The facets and their methods, so the guard (and the testkit) can check a backend is complete: every core facet,
 * and every facet it declares (a declared facet has all its methods).
 */
export const BACKEND_FACETS = {
  migrations: ["apply", "status"],
  jobs: ["enqueue", "enqueueMany", "get", "list", "stats", "cancel", "deleteExpired"],
  runs: ["claim", "settle"],
  deadLetters: ["list", "count", "get", "replay", "purge"],
  workers: [
    "register",
    "heartbeat",
    "stop",
    "list",
    "recoverStale",
    "processing",
    "registerTaskNames",
    "listTaskNames",
  ],
  leases: ["tryAcquire", "release"],
  wakeUps: ["subscribe", "subscribeFinished"],
  schedules: ["upsert", "list", "get", "setPaused", "remove", "recordTick", "history"],
  queues: ["pause", "resume", "configure", "get", "list", "recentStarts"],
  audit: ["record", "list"],
  metrics: ["record", "list", "prune"],
  flows: ["start", "get", "list", "cancel", "stepOfJob", "parents", "notifyFinished"],
  webhooks: [
    "createEndpoint",
    "updateEndpoint",
    "removeEndpoint",
    "getEndpoint",
    "listEndpoints",
    "enqueue",
    "listDeliveries",
    "getDelivery",
    "claimDue",
    "recordAttempt",
    "redeliver",
    "prune",
    "expirePending",
    "countPending",
  ],
  steps: ["list", "save", "saveInTransaction", "completeInTransaction", "wait", "signal"],
  versions: ["count", "list", "rewrite"],
} as const satisfies {
  [F in Exclude<
    keyof Backend,
    "name" | "capabilities" | "close" | "replicationStatus"
  >]-?: readonly (keyof NonNullable<Backend[F]>)[];
};

export type BackendFacetName = keyof typeof BACKEND_FACETS;
