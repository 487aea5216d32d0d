/**
 * Stored records and their public copies. Records keep times as epoch milliseconds and JSON values as
 * text, the way the SQL backends store them: every read parses a fresh copy, so callers can never
 * mutate stored state, and values that would not survive a database round trip do not survive here.
 */
import {
  type DeadLetterJob,
  type Job,
  type JobStatus,
  type ListPosition,
  SoniqError,
  type TraceContext,
  type WorkerInfo,
  type WorkerStatus,
} from "@soniq/core/backend";

export interface JobRecord {
  readonly id: string;
  readonly jobName: string;
  /** Rewritten only by `versions.rewrite` (with `argsVersion`). */
  argsJson: string;
  readonly argsHash: string | null;
  status: JobStatus;
  attempts: number;
  readonly maxAttempts: number;
  readonly queue: string;
  readonly priority: number;
  uniqueJob: boolean;
  dedupKey: string | null;
  scheduledAt: number;
  expiresAt: number | null;
  lastError: string | null;
  resultJson: string | null;
  /** `ctx.progress()`'s last value as JSON (runs.reportProgress). */
  progressJson: string | null;
  readonly producerId: string | null;
  workerId: string | null;
  readonly group: string | null;
  /** The workflow and step this job belongs to (null outside flows). */
  readonly flowId: string | null;
  readonly stepRef: string | null;
  /** The version of the args (DESIGN.md section 20); null: unversioned. */
  argsVersion: number | null;
  readonly createdAt: number;
  updatedAt: number;
  readonly traceId: string | null;
  /** The stored trace context, as JSON text (null = none). */
  readonly traceJson: string | null;
  /** Insertion order: breaks created_at ties so equal timestamps keep enqueue order. */
  readonly seq: number;
  /** Bumped each time the job enters `queued`; heap entries carrying an older value are stale. */
  queuedVersion: number;
  /** False once the row is deleted or moved to the dead-letter table. */
  live: boolean;
}

/** Fields a status transition may change alongside the status itself. */
export type JobPatch = Partial<
  Pick<JobRecord, "attempts" | "scheduledAt" | "expiresAt" | "lastError" | "resultJson" | "workerId">
>;

export interface DeadLetterRecord {
  readonly id: string;
  readonly jobName: string;
  /** Rewritten only by `versions.rewrite` (with `argsVersion`). */
  argsJson: string;
  readonly queue: string;
  readonly priority: number;
  readonly maxAttempts: number;
  readonly attempts: number;
  readonly lastError: string | null;
  readonly deadLetterReason: string;
  readonly tagsJson: string | null;
  resurrectionCount: number;
  lastResurrectionAt: number | null;
  readonly originalCreatedAt: number;
  readonly movedToDeadLetterAt: number;
  readonly createdAt: number;
  readonly traceId: string | null;
  readonly traceJson: string | null;
  readonly seq: number;
  readonly flowId: string | null;
  readonly stepRef: string | null;
  /** The job's args version, kept by the move; a replay copies it to the new job. */
  argsVersion: number | null;
}

export interface WorkerRecord {
  readonly id: string;
  hostname: string;
  pid: number;
  queues: string[];
  concurrency: number;
  status: WorkerStatus;
  lastHeartbeat: number;
  startedAt: number;
  version: string | null;
  metadataJson: string | null;
}

/**
 * Serialise a JSON value for storage; `undefined` is stored as `null` like a SQL NULL. Args that fail
 * are `SONIQ_TASK_ARGS_INVALID`; any other field (result, tags, metadata) `SONIQ_INVALID_ARGUMENT`.
 */
export function encodeJson(value: unknown, field: string, isArgs = false): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (cause) {
    const code = isArgs ? "SONIQ_TASK_ARGS_INVALID" : "SONIQ_INVALID_ARGUMENT";
    throw new SoniqError(code, `The ${field} value is not JSON-serialisable.`, { context: { field }, cause });
  }
  return text ?? "null";
}

export function decodeJson(text: string | null): unknown {
  return text === null ? null : JSON.parse(text);
}

function decodeRecord(text: string | null): Record<string, unknown> | null {
  return text === null ? null : (JSON.parse(text) as Record<string, unknown>);
}

function decodeTrace(text: string | null): TraceContext | null {
  return text === null ? null : (JSON.parse(text) as TraceContext);
}

/** A trace context as stored (JSON text), or null. */
export function encodeTrace(traceContext: TraceContext | null): string | null {
  return traceContext === null ? null : JSON.stringify(traceContext);
}

export function toJob(r: JobRecord): Job {
  return {
    id: r.id,
    jobName: r.jobName,
    args: JSON.parse(r.argsJson),
    argsHash: r.argsHash,
    status: r.status,
    attempts: r.attempts,
    maxAttempts: r.maxAttempts,
    queue: r.queue,
    priority: r.priority,
    uniqueJob: r.uniqueJob,
    dedupKey: r.dedupKey,
    scheduledAt: new Date(r.scheduledAt),
    expiresAt: r.expiresAt === null ? null : new Date(r.expiresAt),
    lastError: r.lastError,
    result: decodeJson(r.resultJson),
    producerId: r.producerId,
    workerId: r.workerId,
    group: r.group,
    flowId: r.flowId,
    stepRef: r.stepRef,
    argsVersion: r.argsVersion,
    createdAt: new Date(r.createdAt),
    updatedAt: new Date(r.updatedAt),
    progress: decodeJson(r.progressJson),
    traceId: r.traceId,
    traceContext: decodeTrace(r.traceJson),
  };
}

export function toDeadLetterJob(r: DeadLetterRecord): DeadLetterJob {
  return {
    id: r.id,
    jobName: r.jobName,
    args: JSON.parse(r.argsJson),
    queue: r.queue,
    priority: r.priority,
    maxAttempts: r.maxAttempts,
    attempts: r.attempts,
    lastError: r.lastError,
    deadLetterReason: r.deadLetterReason,
    tags: decodeRecord(r.tagsJson),
    resurrectionCount: r.resurrectionCount,
    lastResurrectionAt: r.lastResurrectionAt === null ? null : new Date(r.lastResurrectionAt),
    originalCreatedAt: new Date(r.originalCreatedAt),
    movedToDeadLetterAt: new Date(r.movedToDeadLetterAt),
    createdAt: new Date(r.createdAt),
    flowId: r.flowId,
    stepRef: r.stepRef,
    argsVersion: r.argsVersion,
    traceId: r.traceId,
    traceContext: decodeTrace(r.traceJson),
  };
}

export function toWorkerInfo(r: WorkerRecord): WorkerInfo {
  return {
    id: r.id,
    hostname: r.hostname,
    pid: r.pid,
    queues: [...r.queues],
    concurrency: r.concurrency,
    status: r.status,
    lastHeartbeat: new Date(r.lastHeartbeat),
    startedAt: new Date(r.startedAt),
    version: r.version,
    metadata: decodeRecord(r.metadataJson),
  };
}

/** (at, id) against a position's: negative when the row comes first in newest-first order. */
function compareNewestFirst(at: number, id: string, otherAt: number, otherId: string): number {
  return otherAt - at || (id < otherId ? 1 : id > otherId ? -1 : 0);
}

/**
 * One page of a list: newest first (`at` descending, then id descending; by id alone when `at` is null, as
 * jobs list) from the top or after a position; before one (`newer`), the nearest rows first, as the SQL
 * backends answer it (core reverses that page).
 */
export function newestFirst<T extends { id: string }>(
  rows: T[],
  at: ((row: T) => number) | null,
  page: { limit: number; offset: number; position: ListPosition | null },
): T[] {
  const p = page.position;
  const instant = at ?? (() => 0);
  const pos = p === null || at === null ? 0 : p.at.getTime();
  const sign = p?.direction === "newer" ? -1 : 1;
  const kept =
    p === null ? rows : rows.filter((r) => sign * compareNewestFirst(instant(r), r.id, pos, p.id) > 0);
  kept.sort((a, b) => sign * compareNewestFirst(instant(a), a.id, instant(b), b.id));
  return kept.slice(page.offset, page.offset + page.limit);
}

/** The soniq_dead_letter_jobs row a move writes for `job`. */
export function deadLetterRow(
  store: { nextSeq(): number },
  job: JobRecord,
  move: { reason: string; error: string | null },
  tagsJson: string | null,
  now: number,
): DeadLetterRecord {
  return {
    id: job.id,
    jobName: job.jobName,
    argsJson: job.argsJson,
    queue: job.queue,
    priority: job.priority,
    maxAttempts: job.maxAttempts,
    attempts: job.attempts,
    lastError: move.error,
    deadLetterReason: move.reason,
    tagsJson,
    resurrectionCount: 0,
    lastResurrectionAt: null,
    originalCreatedAt: job.createdAt,
    movedToDeadLetterAt: now,
    createdAt: now,
    traceId: job.traceId,
    traceJson: job.traceJson,
    seq: store.nextSeq(),
    flowId: job.flowId,
    stepRef: job.stepRef,
    argsVersion: job.argsVersion,
  };
}

/** The fields a new job row takes from its caller; the rest start as every fresh queued row does. */
export type NewJobFields = Pick<
  JobRecord,
  | "id"
  | "jobName"
  | "argsJson"
  | "argsHash"
  | "maxAttempts"
  | "queue"
  | "priority"
  | "uniqueJob"
  | "dedupKey"
  | "scheduledAt"
  | "producerId"
  | "group"
  | "traceId"
  | "traceJson"
  | "seq"
  | "flowId"
  | "stepRef"
  | "argsVersion"
>;

export function queuedRecord(f: NewJobFields, now: number): JobRecord {
  // Spelled out rather than spread: the claim path reads these records constantly, and a literal keeps one
  // hidden class (a spread of this many keys was the enqueue path's main cost).
  return {
    id: f.id,
    jobName: f.jobName,
    argsJson: f.argsJson,
    argsHash: f.argsHash,
    status: "queued",
    attempts: 0,
    maxAttempts: f.maxAttempts,
    queue: f.queue,
    priority: f.priority,
    uniqueJob: f.uniqueJob,
    dedupKey: f.dedupKey,
    scheduledAt: f.scheduledAt,
    expiresAt: null,
    lastError: null,
    resultJson: null,
    progressJson: null,
    producerId: f.producerId,
    workerId: null,
    group: f.group,
    flowId: f.flowId,
    stepRef: f.stepRef,
    argsVersion: f.argsVersion,
    createdAt: now,
    updatedAt: now,
    traceId: f.traceId,
    traceJson: f.traceJson,
    seq: f.seq,
    queuedVersion: 0,
    live: true,
  };
}
