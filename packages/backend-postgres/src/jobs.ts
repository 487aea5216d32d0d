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
import { JOB_COLUMNS, mapJob, type Row } from "./rows.js";

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;

/** Validated `limit` / `offset` of a list filter: default 100, capped at 1000. */
export function pageOf(operation: string, filter: { limit?: number; offset?: number }) {
  const limit = filter.limit ?? DEFAULT_LIMIT;
  const offset = filter.offset ?? 0;
  const problems: string[] = [];
  if (!Number.isSafeInteger(limit) || limit < 0) problems.push("limit must be an integer >= 0");
  if (!Number.isSafeInteger(offset) || offset < 0) problems.push("offset must be an integer >= 0");
  if (problems.length > 0) {
    throw new SoniqError("SONIQ_INVALID_ARGUMENT", `${operation}(): ${problems.join("; ")}.`, {
      context: { limit, offset, problems },
    });
  }
  return { limit: Math.min(limit, MAX_LIMIT), offset };
}

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
  const { limit, offset } = pageOf("listJobs", filter);
  const statuses = statusesOf(filter);
  const where: string[] = [];
  const values: unknown[] = [];
  const add = (clause: string, value: unknown) => {
    values.push(value);
    where.push(clause.replace("?", `$${values.length}`));
  };
  if (statuses !== undefined) add("status = ANY(?::text[])", statuses);
  if (filter.queue !== undefined) add("queue = ?", filter.queue);
  if (filter.jobName !== undefined) add("job_name = ?", filter.jobName);
  values.push(limit, offset);
  const res = await query<Row>(ctx, "listJobs", {
    text: `SELECT ${JOB_COLUMNS} FROM soniq_jobs
      ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY created_at DESC, id
      LIMIT $${values.length - 1} OFFSET $${values.length}`,
    values,
  });
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
