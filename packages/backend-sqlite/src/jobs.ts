/**
 * The jobs facet: enqueue, reads over soniq_jobs (get, list, stats), cancel, and the cleanup of expired
 * done rows.
 *
 * Enqueue is one `INSERT ... ON CONFLICT DO NOTHING RETURNING id`. The partial unique indexes on
 * `dedup_key` and `(job_name, args_hash)` (queued rows only) decide duplicates inside SQLite, so two
 * processes enqueueing the same key at once still produce one row; the loser reads the winner's id.
 * Everything runs synchronously inside the call: with `tx`, the insert lands in the caller's open
 * better-sqlite3 transaction before `enqueue` returns its promise.
 */

import {
  type EnqueueResult,
  type Job,
  type JobListQuery,
  type JobsFacet,
  type NewJob,
  type QueueStats,
  SoniqError,
  type StatsQuery,
} from "@soniq/core/backend";
import { immediate, runSync, type SqliteContext, type SqliteDatabase } from "./internal/context.js";
import { invalidArgument } from "./internal/errors.js";
import { writeAudit } from "./internal/queue-rows.js";
import { type JobRecord, toJob } from "./internal/rows.js";
import { JOB_COLUMNS, jsonList, msOrNull, NOW, pageSql } from "./internal/sql.js";
import { resolveTxDatabase, type SqliteTx } from "./internal/tx.js";

const INSERT_COLUMNS = `id, job_name, args, args_hash, status, attempts, max_attempts, queue, priority,
  unique_job, dedup_key, scheduled_at, producer_id, "group", created_at, updated_at`;
const INSERT_VALUES = `@id, @jobName, @args, @argsHash, 'queued', 0, @maxAttempts, @queue, @priority,
  @unique, @dedupKey, COALESCE(@scheduledAt, ${NOW}), @producerId, @group, ${NOW}, ${NOW}`;

const INSERT = `INSERT INTO soniq_jobs (${INSERT_COLUMNS}) VALUES (${INSERT_VALUES})
  ON CONFLICT DO NOTHING RETURNING id`;
// Used only after repeated lost races, so that the real constraint error surfaces.
const INSERT_STRICT = `INSERT INTO soniq_jobs (${INSERT_COLUMNS}) VALUES (${INSERT_VALUES})`;
const FIND_DEDUP = "SELECT id FROM soniq_jobs WHERE status = 'queued' AND dedup_key = ?";
const FIND_UNIQUE = `SELECT id FROM soniq_jobs
  WHERE status = 'queued' AND unique_job = 1 AND job_name = ? AND args_hash = ?`;
const ID_EXISTS = "SELECT 1 FROM soniq_jobs WHERE id = ?";

interface InsertParams {
  id: string;
  jobName: string;
  args: string;
  argsHash: string | null;
  maxAttempts: number;
  queue: string;
  priority: number;
  unique: number;
  dedupKey: string | null;
  scheduledAt: number | null;
  producerId: string | null;
  group: string | null;
}

/** Args as JSON text (`undefined` is stored as JSON null); a value JSON cannot encode is SONIQ_TASK_ARGS_INVALID. */
function encodeArgs(args: unknown, index: number): string {
  try {
    return JSON.stringify(args) ?? "null";
  } catch (cause) {
    throw new SoniqError("SONIQ_TASK_ARGS_INVALID", "The args value is not JSON-serialisable.", {
      context: { index },
      cause,
    });
  }
}

function toParams(job: NewJob, index: number): InsertParams {
  return {
    id: job.id,
    jobName: job.jobName,
    args: encodeArgs(job.args, index),
    argsHash: job.argsHash,
    maxAttempts: job.maxAttempts,
    queue: job.queue,
    priority: job.priority,
    unique: job.unique ? 1 : 0,
    dedupKey: job.dedupKey,
    scheduledAt: msOrNull(job.scheduledAt),
    producerId: job.producerId,
    group: job.group,
  };
}

function findExisting(ctx: SqliteContext, db: SqliteDatabase, p: InsertParams): string | null {
  if (p.dedupKey !== null) {
    const row = ctx.statement(FIND_DEDUP, db).get(p.dedupKey) as { id: string } | undefined;
    if (row) return row.id;
  }
  if (p.unique === 1 && p.argsHash !== null) {
    const row = ctx.statement(FIND_UNIQUE, db).get(p.jobName, p.argsHash) as { id: string } | undefined;
    if (row) return row.id;
  }
  return null;
}

function insertOne(ctx: SqliteContext, db: SqliteDatabase, p: InsertParams): EnqueueResult {
  // A conflicting row can leave `queued` between our insert and our read (another process claimed it);
  // then the insert is simply tried again.
  for (let attempt = 0; attempt < 3; attempt++) {
    const inserted = ctx.statement(INSERT, db).get(p) as { id: string } | undefined;
    if (inserted) return { id: inserted.id, deduplicated: false };
    const existing = findExisting(ctx, db, p);
    if (existing !== null) return { id: existing, deduplicated: true };
    if (ctx.statement(ID_EXISTS, db).get(p.id)) {
      throw invalidArgument(`A job with id ${p.id} already exists; every enqueue needs a fresh id.`, {
        id: p.id,
      });
    }
  }
  ctx.statement(INSERT_STRICT, db).run(p);
  return { id: p.id, deduplicated: false };
}

/** Insert one job on `db` (the backend's connection, or the caller's with `tx`). */
export function enqueue(ctx: SqliteContext, db: SqliteDatabase, job: NewJob): EnqueueResult {
  const params = toParams(job, 0);
  const result = insertOne(ctx, db, params);
  if (!result.deduplicated) ctx.notify(params.queue);
  return result;
}

/** All or nothing: one transaction (a SAVEPOINT inside the caller's transaction with `tx`). */
function enqueueMany(ctx: SqliteContext, db: SqliteDatabase, jobs: readonly NewJob[]): EnqueueResult[] {
  const params = jobs.map(toParams);
  if (params.length === 0) return [];
  const results = immediate(ctx, () => params.map((p) => insertOne(ctx, db, p)), db);
  const queues = new Set(params.filter((_, i) => !results[i]?.deduplicated).map((p) => p.queue));
  for (const queue of queues) ctx.notify(queue);
  return results;
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

export function stats(ctx: SqliteContext, { queue }: StatsQuery): QueueStats {
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
  WHERE id = ? AND status IN ('queued', 'processing')`;

const DELETE_EXPIRED = `DELETE FROM soniq_jobs
  WHERE status = 'done' AND expires_at IS NOT NULL AND expires_at <= ${NOW}`;

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
      runSync("jobs.cancel", () =>
        immediate(ctx, () => {
          const cancelled = ctx.statement(CANCEL).run(id).changes > 0;
          if (cancelled && audit) writeAudit(ctx, audit);
          return cancelled;
        }),
      ),
    deleteExpired: () => runSync("jobs.deleteExpired", () => ctx.statement(DELETE_EXPIRED).run().changes),
  };
}
