/** Reads and operator writes on soniq_jobs: get, list, stats, cancel, expired-row cleanup. */
import {
  JOB_STATUSES,
  type Job,
  type JobStatus,
  type ListJobsFilter,
  type QueueStats,
  SoniqError,
} from "@soniq/core";
import { type PgContext, query } from "./context.js";
import { isUuid } from "./errors.js";
import { type Condition, listQuery, pageOf } from "./list-query.js";
import { JOB_COLUMNS, mapJob, type Row } from "./rows.js";

function statusesOf(filter: ListJobsFilter): JobStatus[] | undefined {
  if (filter.status === undefined) return undefined;
  const statuses: readonly JobStatus[] = typeof filter.status === "string" ? [filter.status] : filter.status;
  const unknown = statuses.filter((s) => !(JOB_STATUSES as readonly string[]).includes(s));
  if (unknown.length > 0) {
    throw new SoniqError(
      "SONIQ_INVALID_ARGUMENT",
      `listJobs(): unknown status ${unknown.map((s) => JSON.stringify(s)).join(", ")}; use one of ${JOB_STATUSES.join(", ")} (dead-lettered jobs are listed with listDeadLetterJobs).`,
      { context: { status: filter.status } },
    );
  }
  return [...statuses];
}

export async function getJob(ctx: PgContext, id: string): Promise<Job | null> {
  if (!isUuid(id)) return null;
  const res = await query<Row>(ctx, "getJob", {
    name: "soniq_get_job",
    text: `SELECT ${JOB_COLUMNS} FROM soniq_jobs WHERE id = $1`,
    values: [id],
  });
  const row = res.rows[0];
  return row ? mapJob(row) : null;
}

export async function listJobs(ctx: PgContext, filter: ListJobsFilter = {}): Promise<Job[]> {
  const page = pageOf("listJobs", filter);
  const statuses = statusesOf(filter);
  const conditions: Condition[] = [];
  if (statuses !== undefined) conditions.push(["status = ANY(?::text[])", statuses]);
  if (filter.queue !== undefined) conditions.push(["queue = ?", filter.queue]);
  if (filter.jobName !== undefined) conditions.push(["job_name = ?", filter.jobName]);
  const select = `SELECT ${JOB_COLUMNS} FROM soniq_jobs`;
  const res = await query<Row>(ctx, "listJobs", listQuery(select, conditions, "created_at DESC, id", page));
  return res.rows.map(mapJob);
}

const STATS = `SELECT
  count(*) FILTER (WHERE status = 'queued')::int AS queued,
  count(*) FILTER (WHERE status = 'processing')::int AS processing,
  count(*) FILTER (WHERE status = 'done')::int AS done,
  count(*) FILTER (WHERE status = 'cancelled')::int AS cancelled,
  (SELECT count(*)::int FROM soniq_dead_letter_jobs WHERE $1::text IS NULL OR queue = $1) AS dead_letter
FROM soniq_jobs WHERE $1::text IS NULL OR queue = $1`;

export async function getQueueStats(ctx: PgContext, filter: { queue?: string } = {}): Promise<QueueStats> {
  const res = await query<Omit<QueueStats, "total">>(ctx, "getQueueStats", {
    text: STATS,
    values: [filter.queue ?? null],
  });
  const row = res.rows[0] ?? { queued: 0, processing: 0, done: 0, cancelled: 0, dead_letter: 0 };
  const { queued, processing, done, dead_letter, cancelled } = row;
  return {
    total: queued + processing + done + dead_letter + cancelled,
    queued,
    processing,
    done,
    dead_letter,
    cancelled,
  };
}

export async function cancel(ctx: PgContext, id: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  const res = await query(ctx, "cancel", {
    name: "soniq_cancel",
    text: `UPDATE soniq_jobs SET status = 'cancelled', updated_at = now()
      WHERE id = $1 AND status IN ('queued', 'processing')`,
    values: [id],
  });
  return res.rowCount === 1;
}

export async function deleteExpiredJobs(ctx: PgContext): Promise<number> {
  const res = await query(ctx, "deleteExpiredJobs", {
    text: "DELETE FROM soniq_jobs WHERE status = 'done' AND expires_at <= now()",
  });
  return res.rowCount ?? 0;
}
