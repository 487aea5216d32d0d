/**
 * Raw rows as better-sqlite3 returns them (snake_case, integers, JSON text) and their mapping to the
 * contract's camelCase rows with `Date`s.
 */
import type {
  DeadLetterJob,
  Job,
  JobStatus,
  TraceContext,
  WorkerInfo,
  WorkerStatus,
} from "@soniq/core/backend";

export interface JobRecord {
  id: string;
  job_name: string;
  args: string;
  args_hash: string | null;
  status: string;
  attempts: number;
  max_attempts: number;
  queue: string;
  priority: number;
  unique_job: number;
  dedup_key: string | null;
  scheduled_at: number;
  expires_at: number | null;
  last_error: string | null;
  result: string | null;
  producer_id: string | null;
  worker_id: string | null;
  group: string | null;
  flow_id: string | null;
  step_ref: string | null;
  args_version: number | null;
  created_at: number;
  updated_at: number;
  progress: string | null;
  trace_id: string | null;
  trace_context: string | null;
}

export interface DeadLetterRecord {
  id: string;
  job_name: string;
  args: string;
  queue: string;
  priority: number;
  max_attempts: number;
  attempts: number;
  last_error: string | null;
  dead_letter_reason: string;
  tags: string | null;
  resurrection_count: number;
  last_resurrection_at: number | null;
  original_created_at: number;
  moved_to_dead_letter_at: number;
  created_at: number;
  flow_id: string | null;
  step_ref: string | null;
  args_version: number | null;
  trace_id: string | null;
  trace_context: string | null;
}

export interface WorkerRecord {
  id: string;
  hostname: string;
  pid: number;
  queues: string;
  concurrency: number;
  status: string;
  last_heartbeat: number;
  started_at: number;
  version: string | null;
  metadata: string | null;
}

function parseJson(text: string | null): unknown {
  return text === null ? null : JSON.parse(text);
}

function dateOrNull(ms: number | null): Date | null {
  return ms === null ? null : new Date(ms);
}

function objectOrNull(text: string | null): Record<string, unknown> | null {
  const value = parseJson(text);
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

function traceOrNull(text: string | null): TraceContext | null {
  return text === null ? null : (JSON.parse(text) as TraceContext);
}

export function toJob(r: JobRecord): Job {
  return {
    id: r.id,
    jobName: r.job_name,
    args: parseJson(r.args),
    argsHash: r.args_hash,
    // The CHECK constraint guarantees one of the four statuses.
    status: r.status as JobStatus,
    attempts: r.attempts,
    maxAttempts: r.max_attempts,
    queue: r.queue,
    priority: r.priority,
    uniqueJob: r.unique_job === 1,
    dedupKey: r.dedup_key,
    scheduledAt: new Date(r.scheduled_at),
    expiresAt: dateOrNull(r.expires_at),
    lastError: r.last_error,
    result: parseJson(r.result),
    producerId: r.producer_id,
    workerId: r.worker_id,
    group: r.group,
    flowId: r.flow_id,
    stepRef: r.step_ref,
    argsVersion: r.args_version,
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
    progress: parseJson(r.progress),
    traceId: r.trace_id,
    traceContext: traceOrNull(r.trace_context),
  };
}

export function toDeadLetterJob(r: DeadLetterRecord): DeadLetterJob {
  return {
    id: r.id,
    jobName: r.job_name,
    args: parseJson(r.args),
    queue: r.queue,
    priority: r.priority,
    maxAttempts: r.max_attempts,
    attempts: r.attempts,
    lastError: r.last_error,
    deadLetterReason: r.dead_letter_reason,
    tags: objectOrNull(r.tags),
    resurrectionCount: r.resurrection_count,
    lastResurrectionAt: dateOrNull(r.last_resurrection_at),
    originalCreatedAt: new Date(r.original_created_at),
    movedToDeadLetterAt: new Date(r.moved_to_dead_letter_at),
    createdAt: new Date(r.created_at),
    flowId: r.flow_id,
    stepRef: r.step_ref,
    argsVersion: r.args_version,
    traceId: r.trace_id,
    traceContext: traceOrNull(r.trace_context),
  };
}

export function toWorker(r: WorkerRecord): WorkerInfo {
  const queues = parseJson(r.queues);
  return {
    id: r.id,
    hostname: r.hostname,
    pid: r.pid,
    queues: Array.isArray(queues) ? queues.map(String) : [],
    concurrency: r.concurrency,
    // The CHECK constraint guarantees one of the three statuses.
    status: r.status as WorkerStatus,
    lastHeartbeat: new Date(r.last_heartbeat),
    startedAt: new Date(r.started_at),
    version: r.version,
    metadata: objectOrNull(r.metadata),
  };
}
