/**
 * Claim: SQLite has no SKIP LOCKED, so the claim takes the database's write lock up front
 * (`BEGIN IMMEDIATE`) and selects and updates one batch in a single `UPDATE ... RETURNING`. Other
 * processes wait on `busy_timeout` for the lock, then see the rows already processing: no job is
 * handed out twice. Rows whose attempts would exceed max_attempts go to the dead-letter table in the
 * same transaction instead of being returned.
 */
import type { ClaimRequest, Job } from "@soniq/core";
import { immediate, type SqliteContext } from "./context.js";
import { moveOverAttemptedJobs } from "./dead-letter.js";
import { invalidArgument } from "./errors.js";
import { type JobRecord, toJob } from "./rows.js";
import { JOB_COLUMNS, jsonList, NOW } from "./sql.js";

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

function compareClaimed(a: ClaimedRecord, b: ClaimedRecord): number {
  return a.priority - b.priority || a.scheduled_at - b.scheduled_at || a.claim_order - b.claim_order;
}

export function validateClaim(request: ClaimRequest): void {
  if (!Number.isInteger(request.limit) || request.limit < 1) {
    throw invalidArgument(`claim limit must be an integer >= 1, got ${String(request.limit)}.`, {
      limit: request.limit,
    });
  }
}

function claimBatch(ctx: SqliteContext, request: ClaimRequest, limit: number): ClaimedRecord[] {
  const queues = request.queues
    ? [...new Set(request.queues)]
    : (ctx.statement(QUEUED_QUEUES).all() as { name: string }[]).map((row) => row.name);
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

export function claim(ctx: SqliteContext, request: ClaimRequest): Job[] {
  validateClaim(request);
  if (request.queues !== null && request.queues.length === 0) return [];
  return immediate(ctx, () => {
    const claimed: ClaimedRecord[] = [];
    // Dead-lettered rows leave gaps in the batch; take again (bounded) so the caller still gets work.
    for (let round = 0; round < 5 && claimed.length < request.limit; round++) {
      const rows = claimBatch(ctx, request, request.limit - claimed.length);
      if (rows.length === 0) break;
      const overAttempted: string[] = [];
      for (const row of rows) {
        if (row.attempts > row.max_attempts) overAttempted.push(row.id);
        else claimed.push(row);
      }
      if (overAttempted.length === 0) break;
      moveOverAttemptedJobs(ctx, overAttempted);
    }
    return claimed.sort(compareClaimed).map(toJob);
  });
}
