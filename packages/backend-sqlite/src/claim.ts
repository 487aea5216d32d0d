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

const ORDER = "ORDER BY priority, scheduled_at, created_at, rowid";

function claimSql(queueFilter: string): string {
  // Picked rows are processed in the subquery's order; RETURNING does not keep it, so rowid is returned
  // too and the batch is sorted in JS.
  return `UPDATE soniq_jobs
    SET status = 'processing', attempts = attempts + 1, worker_id = @workerId, updated_at = ${NOW}
    WHERE id IN (
      SELECT id FROM soniq_jobs
      WHERE status = 'queued' ${queueFilter} AND scheduled_at <= ${NOW}
      ${ORDER} LIMIT @limit)
    RETURNING ${JOB_COLUMNS}, rowid AS claim_order`;
}

// Three shapes, so a single queue uses the fetch index (queue, priority, scheduled_at) in order.
const CLAIM_ANY = claimSql("");
const CLAIM_ONE = claimSql("AND queue = @queue");
const CLAIM_SOME = claimSql("AND queue IN (SELECT value FROM json_each(@queues))");

function compareClaimed(a: ClaimedRecord, b: ClaimedRecord): number {
  return (
    a.priority - b.priority ||
    a.scheduled_at - b.scheduled_at ||
    a.created_at - b.created_at ||
    a.claim_order - b.claim_order
  );
}

export function validateClaim(request: ClaimRequest): void {
  if (!Number.isInteger(request.limit) || request.limit < 1) {
    throw invalidArgument(`claim limit must be an integer >= 1, got ${String(request.limit)}.`, {
      limit: request.limit,
    });
  }
}

function claimBatch(ctx: SqliteContext, request: ClaimRequest, limit: number): ClaimedRecord[] {
  const { queues } = request;
  const params = { workerId: request.workerId, limit };
  if (queues === null) return ctx.statement(CLAIM_ANY).all(params) as ClaimedRecord[];
  if (queues.length === 1) {
    return ctx.statement(CLAIM_ONE).all({ ...params, queue: queues[0] }) as ClaimedRecord[];
  }
  return ctx.statement(CLAIM_SOME).all({ ...params, queues: jsonList(queues) }) as ClaimedRecord[];
}

export function claim(ctx: SqliteContext, request: ClaimRequest): Job[] {
  validateClaim(request);
  if (request.queues !== null && request.queues.length === 0) return [];
  return immediate(ctx.db, () => {
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
