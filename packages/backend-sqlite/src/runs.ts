/**
 * The runs facet: claim and settle.
 *
 * Claim: SQLite has no SKIP LOCKED, so the claim takes the database's write lock up front
 * (`BEGIN IMMEDIATE`) and selects and updates one batch in a single `UPDATE ... RETURNING`. Other
 * processes wait on `busy_timeout` for the lock, then see the rows already processing: no job is
 * handed out twice. Every row it took is returned, also one now past its max_attempts (core
 * dead-letters those), so a short batch means nothing more is due, unless a limited queue still has due
 * jobs (a limit held them back: `capped`).
 *
 * Settle: every outcome of a batch (done, requeue, dead_letter) in ONE IMMEDIATE transaction with
 * prepared statements, one commit for the batch. Each item is fenced by (id, attempt) and, when the call
 * names its worker, by the row's worker: it applies only while its row is processing with the attempts
 * (and under the worker) the claim gave it, so a late write after cancel, recovery or a re-claim changes
 * nothing and reports false. The writes are internal/settle.ts (`steps.completeInTransaction` runs the same
 * ones inside its own transaction).
 */
import {
  type ClaimCap,
  type ClaimRequest,
  type ClaimResult,
  claimQueues,
  type ProgressUpdate,
  type RunsFacet,
  type Settlement,
} from "@soniq/core/backend";
import { immediate, runSync, type SqliteContext } from "./internal/context.js";
import { claimWithLimits, controlledQueues } from "./internal/queue-limits.js";
import { type JobRecord, toJob } from "./internal/rows.js";
import { settleBatch } from "./internal/settle.js";
import { JOB_COLUMNS, jsonList, jsonOrNull, NOW } from "./internal/sql.js";

export function runsFacet(ctx: SqliteContext): RunsFacet {
  return {
    claim: (request) => runSync("runs.claim", () => claim(ctx, request)),
    settle: (items, workerId) => runSync("runs.settle", () => settle(ctx, items, workerId ?? null)),
    reportProgress: (updates, workerId) =>
      runSync("runs.reportProgress", () => reportProgress(ctx, updates, workerId)),
  };
}

interface ClaimedRecord extends JobRecord {
  claim_order: number;
}

/**
 * The claim order. `rowid` stands in for created_at as the last key: rowids grow with insertion (a new
 * row gets max(rowid) + 1), so among live rows rowid order is creation order, and the fetch index
 * (queue, priority, scheduled_at) holds entries in exactly this order: no sort, the scan stops at LIMIT.
 */
const ORDER = "ORDER BY priority, scheduled_at, rowid";

/**
 * Limits up to this are written into the SQL as literals (one cached statement per value): measured, a
 * bound `LIMIT ?` made the claim about twice as slow as a literal one on the same plan shape.
 */
const MAX_LITERAL_LIMIT = 1000;

function limitSql(limit: number): string {
  return limit <= MAX_LITERAL_LIMIT ? String(limit) : "@limit";
}

/** Due queued rows of one queue, in claim order. */
function queueArm(param: string, limit: string): string {
  return `SELECT rowid AS r, priority, scheduled_at FROM soniq_jobs
    WHERE status = 'queued' AND queue = @${param} AND scheduled_at <= ${NOW} ${ORDER} LIMIT ${limit}`;
}

function claimSql(picked: string): string {
  // RETURNING does not keep the subquery's order, so rowid is returned too and the batch sorted in JS.
  return `UPDATE soniq_jobs
    SET status = 'processing', attempts = attempts + 1, worker_id = @workerId, updated_at = ${NOW}
    WHERE rowid IN (${picked})
    RETURNING ${JOB_COLUMNS}, rowid AS claim_order`;
}

function claimOneSql(limit: string): string {
  return claimSql(`SELECT r FROM (${queueArm("q0", limit)})`);
}

/** Up to this many queues, each gets its own index scan, merged (a UNION ALL of per-queue top-N). */
const MAX_MERGED_QUEUES = 32;

/** Several queues: the top `limit` of each queue from the index, merged, then the top `limit` overall. */
function claimManySql(count: number, limit: string): string {
  const arms = Array.from({ length: count }, (_, i) => `SELECT * FROM (${queueArm(`q${i}`, limit)})`);
  return claimSql(
    `SELECT r FROM (${arms.join(" UNION ALL ")} ORDER BY priority, scheduled_at, r LIMIT ${limit})`,
  );
}

/** Beyond MAX_MERGED_QUEUES: one scan over every queued row of those queues, sorted. */
function claimScanSql(limit: string): string {
  return claimSql(`SELECT rowid FROM soniq_jobs
    WHERE status = 'queued' AND queue IN (SELECT value FROM json_each(@queues)) AND scheduled_at <= ${NOW}
    ${ORDER} LIMIT ${limit}`);
}

/** The queues that have queued rows, by skip-scanning the fetch index (one seek per queue). */
const QUEUED_QUEUES = `WITH RECURSIVE q(name) AS (
    SELECT MIN(queue) FROM soniq_jobs WHERE status = 'queued'
    UNION ALL
    SELECT (SELECT MIN(queue) FROM soniq_jobs WHERE status = 'queued' AND queue > q.name)
    FROM q WHERE q.name IS NOT NULL)
  SELECT name FROM q WHERE name IS NOT NULL`;

/** RETURNING does not keep the subquery's order: the usual path sorts its batch here. */
function sortClaimed(rows: ClaimedRecord[]): ClaimedRecord[] {
  return rows.sort(
    (a, b) => a.priority - b.priority || a.scheduled_at - b.scheduled_at || a.claim_order - b.claim_order,
  );
}

function queuedQueues(ctx: SqliteContext): string[] {
  return (ctx.statement(QUEUED_QUEUES).all() as { name: string }[]).map((row) => row.name);
}

interface Batch {
  rows: ClaimedRecord[];
  capped: ClaimCap | null;
}

/**
 * Without paused or limited queues, the usual path. Otherwise core splits the queues (`claimQueues`): paused
 * ones are left out, open ones take the usual path when no limited queue is covered, else the limited path
 * (internal/queue-limits.ts) reads both and core chooses what to take, in claim order.
 */
function claimBatch(ctx: SqliteContext, request: ClaimRequest): Batch {
  const controls = controlledQueues(ctx);
  if (controls.size === 0)
    return { rows: sortClaimed(claimFrom(ctx, request, request.queues)), capped: null };
  const split = claimQueues(request.queues, controls);
  const open = split.open ?? queuedQueues(ctx).filter((q) => !controls.has(q));
  if (split.limited.length === 0) return { rows: sortClaimed(claimFrom(ctx, request, open)), capped: null };
  return claimWithLimits<ClaimedRecord>(ctx, request, controls, open, split.limited);
}

function claimFrom(
  ctx: SqliteContext,
  request: ClaimRequest,
  only: readonly string[] | null,
): ClaimedRecord[] {
  const { limit } = request;
  const queues = only ? [...new Set(only)] : queuedQueues(ctx);
  if (queues.length === 0) return [];
  const limitText = limitSql(limit);
  const params: Record<string, unknown> = { workerId: request.workerId };
  if (limitText === "@limit") params.limit = limit;
  if (queues.length > MAX_MERGED_QUEUES) {
    const scan = ctx.generated(`claim:scan:${limitText}`, () => claimScanSql(limitText));
    return scan.all({ ...params, queues: jsonList(queues) }) as ClaimedRecord[];
  }
  queues.forEach((queue, i) => {
    params[`q${i}`] = queue;
  });
  // Generated SQL is cached under a short key: building and hashing the long text on every claim costs more.
  const count = queues.length;
  const stmt = ctx.generated(`claim:${count}:${limitText}`, () =>
    count === 1 ? claimOneSql(limitText) : claimManySql(count, limitText),
  );
  return stmt.all(params) as ClaimedRecord[];
}

function claim(ctx: SqliteContext, request: ClaimRequest): ClaimResult {
  const { rows, capped } = immediate(ctx, () => claimBatch(ctx, request));
  return { jobs: rows.map(toJob), capped };
}

function settle(ctx: SqliteContext, items: readonly Settlement[], workerId: string | null): boolean[] {
  if (items.length === 0) return [];
  const batch = settleBatch(ctx, items, workerId);
  const applied = immediate(ctx, batch.write);
  batch.announce(applied);
  return applied;
}

/**
 * Fenced by (id, attempt) and the worker when one is named, not by status: a run that just settled still gets
 * its last value (contract `ProgressUpdate`).
 */
const PROGRESS =
  "UPDATE soniq_jobs SET progress = @progress WHERE id = @id AND attempts = @attempt AND (@workerId IS NULL OR worker_id = @workerId)";

function reportProgress(
  ctx: SqliteContext,
  updates: readonly ProgressUpdate[],
  workerId: string | undefined,
): number {
  const params = updates.map((u) => ({
    id: u.id,
    attempt: u.attempt,
    workerId: workerId ?? null,
    progress: jsonOrNull(u.value, "progress"),
  }));
  return immediate(ctx, () =>
    params.reduce((written, p) => written + ctx.statement(PROGRESS).run(p).changes, 0),
  );
}
