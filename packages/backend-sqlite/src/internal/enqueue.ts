/**
 * The one job insert of the SQLite backend, used by `jobs.enqueue(Many)` and a schedule's fired tick.
 *
 * Enqueue is one `INSERT ... ON CONFLICT DO NOTHING`. The partial unique indexes on
 * `dedup_key` and `(job_name, args_hash)` (queued rows only) decide duplicates inside SQLite, so two
 * processes enqueueing the same key at once still produce one row; the loser reads the winner's id.
 *
 * A plain batch (no job with a dedup key or `unique`) inserts `ROWS_PER_INSERT` rows per statement: such a row
 * can meet no conflict but a repeated id, which is an error. One statement per row spent most of a bulk
 * enqueue's time crossing into SQLite and back (binding, stepping, resetting); fifty per statement made a
 * 1,000-job batch 1.3-1.6x as fast (bench/README.md). A chunk that hits a constraint is undone by SQLite (the
 * statement alone) and inserted row by row, which names the repeated id as a single insert does.
 */
import { type EnqueueResult, type NewJob, SoniqError } from "@soniq/core/backend";
import { immediate, type SqliteContext, type SqliteDatabase } from "./context.js";
import { findSqliteError, invalidArgument } from "./errors.js";
import { msOrNull, NOW } from "./sql.js";

const INSERT_COLUMNS = `id, job_name, args, args_hash, status, attempts, max_attempts, queue, priority,
  unique_job, dedup_key, scheduled_at, producer_id, "group", created_at, updated_at, trace_id, trace_context,
  args_version`;
// Positional parameters, in `insertValues` order: better-sqlite3 binds an array a fifth faster than an object
// of named parameters (7-9.6 against 9-11.7 µs per row of a 1,000-row batch).
const INSERT_VALUES = `?, ?, ?, ?, 'queued', 0, ?, ?, ?,
  ?, ?, COALESCE(?, ${NOW}), ?, ?, ${NOW}, ${NOW}, ?, ?,
  ?`;

// No RETURNING: the row inserted is the one with our id, and `changes` tells whether it was (a RETURNING
// row cost about a fifth of a bulk enqueue's per-row time).
const INSERT = `INSERT INTO soniq_jobs (${INSERT_COLUMNS}) VALUES (${INSERT_VALUES})
  ON CONFLICT DO NOTHING`;
/** Rows per statement of a plain batch (15 parameters each: 750 of SQLite's 32,766). */
export const ROWS_PER_INSERT = 50;
const INSERT_ROWS = `INSERT INTO soniq_jobs (${INSERT_COLUMNS}) VALUES ${Array.from(
  { length: ROWS_PER_INSERT },
  () => `(${INSERT_VALUES})`,
).join(",\n")}`;
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
  traceId: string | null;
  traceContext: string | null;
  argsVersion: number | null;
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
    traceId: job.traceId,
    traceContext: job.traceContext === null ? null : JSON.stringify(job.traceContext),
    argsVersion: job.argsVersion ?? null,
  };
}

function insertValues(p: InsertParams): unknown[] {
  return [
    p.id,
    p.jobName,
    p.args,
    p.argsHash,
    p.maxAttempts,
    p.queue,
    p.priority,
    p.unique,
    p.dedupKey,
    p.scheduledAt,
    p.producerId,
    p.group,
    p.traceId,
    p.traceContext,
    p.argsVersion,
  ];
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
  const values = insertValues(p);
  for (let attempt = 0; attempt < 3; attempt++) {
    if (ctx.statement(INSERT, db).run(values).changes === 1) return { id: p.id, deduplicated: false };
    const existing = findExisting(ctx, db, p);
    if (existing !== null) return { id: existing, deduplicated: true };
    if (ctx.statement(ID_EXISTS, db).get(p.id)) {
      throw invalidArgument(`A job with id ${p.id} already exists; every enqueue needs a fresh id.`, {
        id: p.id,
      });
    }
  }
  ctx.statement(INSERT_STRICT, db).run(values);
  return { id: p.id, deduplicated: false };
}

/** Whether no job of the batch carries a key that could make it a duplicate (only its id could clash). */
function isPlain(params: readonly InsertParams[]): boolean {
  return params.every((p) => p.dedupKey === null && p.unique === 0);
}

/**
 * A plain batch, `ROWS_PER_INSERT` rows per statement; the rows of a chunk that met a constraint (a repeated
 * id), and the last rows short of a chunk, one by one (`insertOne`).
 */
function insertPlain(ctx: SqliteContext, db: SqliteDatabase, params: readonly InsertParams[]): void {
  const full = params.length - (params.length % ROWS_PER_INSERT);
  const values: unknown[] = [];
  for (let start = 0; start < full; start += ROWS_PER_INSERT) {
    values.length = 0;
    for (let i = start; i < start + ROWS_PER_INSERT; i++)
      values.push(...insertValues(params[i] as InsertParams));
    try {
      ctx.statement(INSERT_ROWS, db).run(values);
    } catch (err) {
      if (!findSqliteError(err)?.code.startsWith("SQLITE_CONSTRAINT")) throw err;
      for (let i = start; i < start + ROWS_PER_INSERT; i++) insertOne(ctx, db, params[i] as InsertParams);
    }
  }
  for (let i = full; i < params.length; i++) insertOne(ctx, db, params[i] as InsertParams);
}

/** Insert one job on `db` (the backend's connection, or the caller's with `tx`). */
export function enqueue(ctx: SqliteContext, db: SqliteDatabase, job: NewJob): EnqueueResult {
  const params = toParams(job, 0);
  const result = insertOne(ctx, db, params);
  if (!result.deduplicated) ctx.notify(params.queue);
  return result;
}

/** All or nothing: one transaction (a SAVEPOINT inside the caller's transaction with `tx`). */
export function enqueueMany(
  ctx: SqliteContext,
  db: SqliteDatabase,
  jobs: readonly NewJob[],
): EnqueueResult[] {
  const params = jobs.map(toParams);
  if (params.length === 0) return [];
  if (isPlain(params)) {
    immediate(ctx, () => insertPlain(ctx, db, params), db);
    for (const queue of new Set(params.map((p) => p.queue))) ctx.notify(queue);
    return params.map((p) => ({ id: p.id, deduplicated: false }));
  }
  const results = immediate(ctx, () => params.map((p) => insertOne(ctx, db, p)), db);
  const queues = new Set(params.filter((_, i) => !results[i]?.deduplicated).map((p) => p.queue));
  for (const queue of queues) ctx.notify(queue);
  return results;
}
