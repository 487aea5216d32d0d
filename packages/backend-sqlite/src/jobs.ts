/**
 * The jobs facet: enqueue (the insert is internal/enqueue.ts, shared with schedules), reads over soniq_jobs
 * (get, list, stats), cancel, and the cleanup of expired done rows. Everything runs synchronously inside the
 * call: with `tx`, the insert lands in the caller's open better-sqlite3 transaction before `enqueue` returns
 * its promise.
 */
import {
  finishStep,
  type Job,
  type JobListQuery,
  type JobsFacet,
  type QueueStats,
  type StatsQuery,
} from "@soniq/core/backend";
import { writeAudit } from "./internal/audit-rows.js";
import { immediate, runSync, type SqliteContext } from "./internal/context.js";
import { enqueue, enqueueMany } from "./internal/enqueue.js";
import { runFlow } from "./internal/flow-store.js";
import { type JobRecord, toJob } from "./internal/rows.js";
import { JOB_COLUMNS, jsonList, NOW, pageSql, searchAndIds } from "./internal/sql.js";
import { deleteOrphanSteps } from "./internal/step-rows.js";
import { resolveTxDatabase, type SqliteTx } from "./internal/tx.js";

export function jobsFacet(ctx: SqliteContext): JobsFacet<SqliteTx> {
  const on = (tx: SqliteTx | undefined) => (tx === undefined ? ctx.db : resolveTxDatabase(tx, ctx.db));
  return {
    enqueue: (job, options) => runSync("jobs.enqueue", () => enqueue(ctx, on(options.tx), job)),
    enqueueMany: (jobs, options) => runSync("jobs.enqueueMany", () => enqueueMany(ctx, on(options.tx), jobs)),
    get: (id) =>
      runSync("jobs.get", () => {
        const row = ctx.statement(GET).get(id) as JobRecord | undefined;
        return row ? toJob(row) : null;
      }),
    list: (query) => runSync("jobs.list", () => list(ctx, query)),
    stats: (query) => runSync("jobs.stats", () => stats(ctx, query)),
    cancel: (id, audit) =>
      runSync("jobs.cancel", () => {
        const cancelled = immediate(ctx, () => {
          const row = ctx.statement(CANCEL).get(id) as
            | { flow_id: string | null; step_ref: string | null }
            | undefined;
          if (row?.flow_id != null && row.step_ref !== null) {
            runFlow(ctx, finishStep(row.flow_id, row.step_ref, id, "cancelled", [], new Date()));
          }
          if (row !== undefined && audit) writeAudit(ctx, audit);
          return row !== undefined;
        });
        if (cancelled) ctx.finished([id]);
        return cancelled;
      }),
    deleteExpired: () =>
      runSync("jobs.deleteExpired", () =>
        immediate(ctx, () => {
          const deleted = ctx.statement(DELETE_EXPIRED).run().changes;
          deleteOrphanSteps(ctx);
          return deleted;
        }),
      ),
  };
}

const GET = `SELECT ${JOB_COLUMNS} FROM soniq_jobs WHERE id = ?`;

function list(ctx: SqliteContext, query: JobListQuery): Job[] {
  const where: string[] = [];
  const params: Record<string, unknown> = { limit: query.limit, offset: query.offset };
  if (query.statuses !== null) {
    where.push("status IN (SELECT value FROM json_each(@statuses))");
    params.statuses = jsonList(query.statuses);
  }
  if (query.queue !== null) {
    where.push("queue = @queue");
    params.queue = query.queue;
  }
  if (query.jobName !== null) {
    where.push("job_name = @jobName");
    params.jobName = query.jobName;
  }
  where.push(...searchAndIds(query, params));
  // By id alone (UUIDv7, time-ordered): the primary key (core/src/contract/jobs.ts `JobsFacet.list`).
  const sql = `SELECT ${JOB_COLUMNS} FROM soniq_jobs ${pageSql(null, query, where, params)}`;
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

function stats(ctx: SqliteContext, { queue }: StatsQuery): QueueStats {
  // One read transaction: both counts come from the same snapshot, so a job mid-move is counted once.
  return ctx.db.transaction(() => {
    const counts = (
      queue === null ? ctx.statement(STATS_ALL).get() : ctx.statement(STATS_QUEUE).get(queue)
    ) as StatusCounts;
    const dlq = (
      queue === null ? ctx.statement(DLQ_COUNT_ALL).get() : ctx.statement(DLQ_COUNT_QUEUE).get(queue)
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

// The worker's late writes after a cancel are fenced out (the row is no longer processing).
const CANCEL = `UPDATE soniq_jobs SET status = 'cancelled', updated_at = ${NOW}
  WHERE id = ? AND status IN ('queued', 'processing') RETURNING flow_id, step_ref`;

/**
 * The retention sweep: done rows whose result TTL has passed. It reads `idx_soniq_jobs_finished` (queue,
 * status, expires_at) queue by queue: the queue names by skip-scanning the same index (one seek per queue),
 * then each queue's expired range (the `IN` term is the index's own predicate, which SQLite needs spelt out to
 * use a partial index), so a sweep reads the rows it deletes and a probe per queue, however many
 * done rows are kept (test/sweep-plan.test.ts). A flow step's result is kept while its flow is open (a
 * dependent reads it through ctx.flow.parents()). In the same transaction the checkpoints and signals of jobs
 * that are gone (internal/step-rows.ts) follow.
 */
export const DELETE_EXPIRED = `WITH RECURSIVE q(name) AS (
    SELECT MIN(queue) FROM soniq_jobs WHERE status IN ('done', 'cancelled')
    UNION ALL
    SELECT (SELECT MIN(queue) FROM soniq_jobs WHERE status IN ('done', 'cancelled') AND queue > q.name)
    FROM q WHERE q.name IS NOT NULL)
  DELETE FROM soniq_jobs INDEXED BY idx_soniq_jobs_finished
  WHERE queue IN (SELECT name FROM q WHERE name IS NOT NULL) AND status IN ('done', 'cancelled')
    AND status = 'done' AND expires_at <= ${NOW}
    AND (flow_id IS NULL OR NOT EXISTS (SELECT 1 FROM soniq_flows f
      WHERE f.id = soniq_jobs.flow_id AND f.state IN ('running', 'held')))`;
