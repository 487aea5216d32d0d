/**
 * The conformance kit's inspector for SQLite: a second raw better-sqlite3 connection to the same file,
 * with its own row mapping, so cases can check storage without trusting the backend's reads.
 */
import type { DeadLetterJob, Job, JobStatus } from "@soniq/core/backend";
import type { BackendInspector } from "@soniq/testkit";
import Database from "better-sqlite3";
import { translateError } from "../src/internal/errors.js";

type Row = Record<string, unknown>;

const date = (v: unknown) => new Date(Number(v));
const dateOrNull = (v: unknown) => (v === null ? null : date(v));
const json = (v: unknown) => (v === null ? null : JSON.parse(String(v)));

function job(r: Row): Job {
  return {
    id: String(r.id),
    jobName: String(r.job_name),
    args: json(r.args),
    argsHash: r.args_hash as string | null,
    status: r.status as JobStatus,
    attempts: Number(r.attempts),
    maxAttempts: Number(r.max_attempts),
    queue: String(r.queue),
    priority: Number(r.priority),
    uniqueJob: r.unique_job === 1,
    dedupKey: r.dedup_key as string | null,
    scheduledAt: date(r.scheduled_at),
    expiresAt: dateOrNull(r.expires_at),
    lastError: r.last_error as string | null,
    result: json(r.result),
    producerId: r.producer_id as string | null,
    workerId: r.worker_id as string | null,
    group: r.group as string | null,
    flowId: (r.flow_id ?? null) as string | null,
    stepRef: (r.step_ref ?? null) as string | null,
    argsVersion: (r.args_version ?? null) as number | null,
    createdAt: date(r.created_at),
    updatedAt: date(r.updated_at),
    progress: json(r.progress ?? null),
    traceId: r.trace_id as string | null,
    traceContext: json(r.trace_context),
  };
}

function deadLetterJob(r: Row): DeadLetterJob {
  return {
    id: String(r.id),
    jobName: String(r.job_name),
    args: json(r.args),
    queue: String(r.queue),
    priority: Number(r.priority),
    maxAttempts: Number(r.max_attempts),
    attempts: Number(r.attempts),
    lastError: r.last_error as string | null,
    deadLetterReason: String(r.dead_letter_reason),
    tags: json(r.tags),
    resurrectionCount: Number(r.resurrection_count),
    lastResurrectionAt: dateOrNull(r.last_resurrection_at),
    originalCreatedAt: date(r.original_created_at),
    movedToDeadLetterAt: date(r.moved_to_dead_letter_at),
    createdAt: date(r.created_at),
    flowId: (r.flow_id ?? null) as string | null,
    stepRef: (r.step_ref ?? null) as string | null,
    argsVersion: (r.args_version ?? null) as number | null,
    traceId: r.trace_id as string | null,
    traceContext: json(r.trace_context),
  };
}

export function sqliteInspector(file: string): BackendInspector & { close(): void } {
  let db: Database.Database | undefined;
  // Opened on first use: the kit migrates the backend before any case reads.
  const conn = () => {
    db ??= new Database(file);
    return db;
  };
  return {
    async readJob(id) {
      const row = conn().prepare("SELECT * FROM soniq_jobs WHERE id = ?").get(id) as Row | undefined;
      return row ? job(row) : null;
    },
    async readDeadLetterJob(id) {
      const row = conn().prepare("SELECT * FROM soniq_dead_letter_jobs WHERE id = ?").get(id) as
        | Row
        | undefined;
      return row ? deadLetterJob(row) : null;
    },
    async writeJobStatus(id, status) {
      try {
        conn().prepare("UPDATE soniq_jobs SET status = ? WHERE id = ?").run(status, id);
      } catch (err) {
        throw translateError(err, "writeJobStatus");
      }
    },
    async backdateWorkerHeartbeat(workerId, byMs) {
      conn()
        .prepare("UPDATE soniq_workers SET last_heartbeat = last_heartbeat - ? WHERE id = ?")
        .run(Math.round(byMs), workerId);
    },
    close() {
      db?.close();
    },
  };
}
