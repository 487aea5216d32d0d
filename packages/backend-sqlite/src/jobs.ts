/** Reads over soniq_jobs (get, list, stats) and the cleanup of expired done rows. */
import type { Job, ListJobsFilter, QueueStats } from "@soniq/core";
import { JOB_STATUSES } from "@soniq/core";
import type { SqliteContext } from "./context.js";
import { invalidArgument } from "./errors.js";
import { type JobRecord, toJob } from "./rows.js";
import { JOB_COLUMNS, NOW } from "./sql.js";

const GET = `SELECT ${JOB_COLUMNS} FROM soniq_jobs WHERE id = ?`;

export function getJob(ctx: SqliteContext, id: string): Job | null {
  if (typeof id !== "string") return null;
  const row = ctx.statement(GET).get(id) as JobRecord | undefined;
  return row ? toJob(row) : null;
}

/** Default 100, at most 1000; offset >= 0. Shared with the dead-letter listing. */
export function pageOf(filter: { limit?: number; offset?: number }): { limit: number; offset: number } {
  const limit = filter.limit ?? 100;
  const offset = filter.offset ?? 0;
  if (!Number.isInteger(limit) || limit < 0 || !Number.isInteger(offset) || offset < 0) {
    throw invalidArgument("limit and offset must be integers >= 0.", { limit, offset });
  }
  return { limit: Math.min(limit, 1000), offset };
}

function statusList(status: ListJobsFilter["status"]): string[] | null {
  if (status === undefined) return null;
  const list = typeof status === "string" ? [status] : [...status];
  const unknown = list.filter((s) => !(JOB_STATUSES as readonly string[]).includes(s));
  if (unknown.length > 0) {
    throw invalidArgument(`Unknown job status: ${unknown.join(", ")}. Use ${JOB_STATUSES.join(", ")}.`, {
      status: unknown,
    });
  }
  return list;
}

export function listJobs(ctx: SqliteContext, filter: ListJobsFilter = {}): Job[] {
  const { limit, offset } = pageOf(filter);
  const where: string[] = [];
  const params: Record<string, unknown> = { limit, offset };
  const statuses = statusList(filter.status);
  if (statuses) {
    where.push("status IN (SELECT value FROM json_each(@statuses))");
    params.statuses = JSON.stringify(statuses);
  }
  if (filter.queue !== undefined) {
    where.push("queue = @queue");
    params.queue = filter.queue;
  }
  if (filter.jobName !== undefined) {
    where.push("job_name = @jobName");
    params.jobName = filter.jobName;
  }
  const sql = `SELECT ${JOB_COLUMNS} FROM soniq_jobs ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
    ORDER BY created_at DESC, rowid DESC LIMIT @limit OFFSET @offset`;
  return (ctx.statement(sql).all(params) as JobRecord[]).map(toJob);
}

const STATS = `SELECT
    COALESCE(SUM(status = 'queued'), 0) AS queued,
    COALESCE(SUM(status = 'processing'), 0) AS processing,
    COALESCE(SUM(status = 'done'), 0) AS done,
    COALESCE(SUM(status = 'cancelled'), 0) AS cancelled`;
const STATS_ALL = `${STATS} FROM soniq_jobs`;
const STATS_QUEUE = `${STATS} FROM soniq_jobs WHERE queue = ?`;
const DLQ_COUNT_ALL = "SELECT COUNT(*) AS n FROM soniq_dead_letter_jobs";
const DLQ_COUNT_QUEUE = "SELECT COUNT(*) AS n FROM soniq_dead_letter_jobs WHERE queue = ?";

type StatusCounts = Omit<QueueStats, "total" | "dead_letter">;

export function getQueueStats(ctx: SqliteContext, filter: { queue?: string } = {}): QueueStats {
  const queue = filter.queue;
  // One read transaction: both counts come from the same snapshot, so a job mid-move is counted once.
  return ctx.db.transaction(() => {
    const counts = (
      queue === undefined ? ctx.statement(STATS_ALL).get() : ctx.statement(STATS_QUEUE).get(queue)
    ) as StatusCounts;
    const dlq = (
      queue === undefined ? ctx.statement(DLQ_COUNT_ALL).get() : ctx.statement(DLQ_COUNT_QUEUE).get(queue)
    ) as { n: number };
    const { queued, processing, done, cancelled } = counts;
    return {
      total: queued + processing + done + cancelled + dlq.n,
      queued,
      processing,
      done,
      dead_letter: dlq.n,
      cancelled,
    };
  })();
}

const DELETE_EXPIRED = `DELETE FROM soniq_jobs
  WHERE status = 'done' AND expires_at IS NOT NULL AND expires_at <= ${NOW}`;

export function deleteExpiredJobs(ctx: SqliteContext): number {
  return ctx.statement(DELETE_EXPIRED).run().changes;
}
