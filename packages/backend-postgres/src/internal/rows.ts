/**
 * Column lists and row mappers: every read returns rows shaped exactly as core's `Job`,
 * `DeadLetterJob` and `WorkerInfo` (camelCase, timestamps as `Date`).
 */
import type {
  DeadLetterJob,
  Job,
  JobStatus,
  TraceContext,
  WorkerInfo,
  WorkerStatus,
} from "@soniq/core/backend";

export const JOB_COLUMNS =
  "id, job_name, args, args_hash, status, attempts, max_attempts, queue, priority, unique_job, dedup_key, " +
  'scheduled_at, expires_at, last_error, result, producer_id, worker_id, "group", flow_id, step_ref, created_at, updated_at, progress, ' +
  "trace_id, trace_context, args_version";

export const DEAD_LETTER_COLUMNS =
  "id, job_name, args, queue, priority, max_attempts, attempts, last_error, dead_letter_reason, tags, " +
  "resurrection_count, last_resurrection_at, original_created_at, moved_to_dead_letter_at, created_at, flow_id, step_ref, " +
  "trace_id, trace_context, args_version";

export const WORKER_COLUMNS =
  "id, hostname, pid, queues, concurrency, status, last_heartbeat, started_at, version, metadata";

export type Row = Record<string, unknown>;

/** pg parses timestamptz into `Date` by default; a pool with a custom type parser may hand back strings. */
export function toDate(value: unknown): Date {
  if (value instanceof Date) return value;
  return new Date(String(value));
}

function toDateOrNull(value: unknown): Date | null {
  return value === null || value === undefined ? null : toDate(value);
}

function str(value: unknown): string {
  return String(value);
}

function strOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}

function num(value: unknown): number {
  return typeof value === "number" ? value : Number(value);
}

function numOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : num(value);
}

function record(value: unknown): Record<string, unknown> | null {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : null;
}

export function mapJob(row: Row): Job {
  return {
    id: str(row.id),
    jobName: str(row.job_name),
    args: row.args,
    argsHash: strOrNull(row.args_hash),
    status: row.status as JobStatus,
    attempts: num(row.attempts),
    maxAttempts: num(row.max_attempts),
    queue: str(row.queue),
    priority: num(row.priority),
    uniqueJob: row.unique_job === true,
    dedupKey: strOrNull(row.dedup_key),
    scheduledAt: toDate(row.scheduled_at),
    expiresAt: toDateOrNull(row.expires_at),
    lastError: strOrNull(row.last_error),
    result: row.result ?? null,
    producerId: strOrNull(row.producer_id),
    workerId: strOrNull(row.worker_id),
    group: strOrNull(row.group),
    flowId: strOrNull(row.flow_id),
    stepRef: strOrNull(row.step_ref),
    argsVersion: numOrNull(row.args_version),
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
    progress: row.progress ?? null,
    traceId: strOrNull(row.trace_id),
    traceContext: (row.trace_context ?? null) as TraceContext | null,
  };
}

export function mapDeadLetterJob(row: Row): DeadLetterJob {
  return {
    id: str(row.id),
    jobName: str(row.job_name),
    args: row.args,
    queue: str(row.queue),
    priority: num(row.priority),
    maxAttempts: num(row.max_attempts),
    attempts: num(row.attempts),
    lastError: strOrNull(row.last_error),
    deadLetterReason: str(row.dead_letter_reason),
    tags: record(row.tags),
    resurrectionCount: num(row.resurrection_count),
    lastResurrectionAt: toDateOrNull(row.last_resurrection_at),
    originalCreatedAt: toDate(row.original_created_at),
    movedToDeadLetterAt: toDate(row.moved_to_dead_letter_at),
    createdAt: toDate(row.created_at),
    flowId: strOrNull(row.flow_id),
    stepRef: strOrNull(row.step_ref),
    argsVersion: numOrNull(row.args_version),
    traceId: strOrNull(row.trace_id),
    traceContext: (row.trace_context ?? null) as TraceContext | null,
  };
}

export function mapWorker(row: Row): WorkerInfo {
  return {
    id: str(row.id),
    hostname: str(row.hostname),
    pid: num(row.pid),
    queues: Array.isArray(row.queues) ? row.queues.map(str) : [],
    concurrency: num(row.concurrency),
    status: row.status as WorkerStatus,
    lastHeartbeat: toDate(row.last_heartbeat),
    startedAt: toDate(row.started_at),
    version: strOrNull(row.version),
    metadata: record(row.metadata),
  };
}
