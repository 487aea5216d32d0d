/**
 * `markJobsDeadLetter`: the worker's batched, fenced dead-letter moves in ONE statement. A data-modifying
 * CTE DELETEs every fenced row (processing under the item's attempt) RETURNING it, and INSERTs those rows
 * into soniq_dead_letter_jobs. One statement is one transaction: each job is in exactly one table at every
 * consistent read.
 *
 * Rows are found by `id = ANY($1)` (primary-key lookups); each item's attempt, reason, error and tags are
 * read from one jsonb object keyed by id, as in `complete`. A join with `jsonb_to_recordset` (estimated at
 * 100 rows) was planned as a nested loop over a sequential scan that re-read the item list per row: 58 ms
 * for 500 items on a 20,000-row table, quadratic in the batch; this form is linear.
 *
 * Conflict policy: an item whose id already has a dead-letter row is skipped (its job stays processing,
 * untouched) and the others move; the DELETE excludes it, because an `ON CONFLICT DO NOTHING` on the
 * INSERT would let the DELETE of that row commit and lose the job. The caller learns which ids moved from
 * the returned list. (Dead-letter ids are only written by moves that first lock the job row, so a
 * conflicting row cannot appear between the check and the insert from Soniq itself; if something else
 * inserts one concurrently, the statement fails as a whole and nothing moves.)
 */
import type { DeadLetterItem } from "@soniq/core";
import { ASYNC_COMMIT, type DeadLetterInterrupt, type PgContext, query } from "./context.js";
import { isUuid } from "./errors.js";
import { inDedicatedTransaction } from "./interrupted-move.js";

// $1: the ids; $2: { "<id>": [attempt, reason, error, tags?] } (a missing fourth element leaves tags NULL).
function batchSql(asyncCommit: boolean): string {
  return `WITH moved AS (
  DELETE FROM soniq_jobs j ${asyncCommit ? `USING ${ASYNC_COMMIT}` : ""}
  WHERE j.id = ANY($1::uuid[]) AND j.status = 'processing' AND j.attempts = ($2::jsonb -> j.id::text ->> 0)::int
    AND NOT EXISTS (SELECT 1 FROM soniq_dead_letter_jobs d WHERE d.id = j.id)
  RETURNING j.id, j.job_name, j.args, j.queue, j.priority, j.max_attempts, j.attempts, j.created_at)
INSERT INTO soniq_dead_letter_jobs (id, job_name, args, queue, priority, max_attempts, attempts, last_error,
  dead_letter_reason, tags, original_created_at)
SELECT id, job_name, args, queue, priority, max_attempts, attempts, $2::jsonb -> id::text ->> 2,
  $2::jsonb -> id::text ->> 1, $2::jsonb -> id::text -> 3, created_at FROM moved
RETURNING id`;
}

const BATCH = { sync: batchSql(false), async: batchSql(true) } as const;

/** The statement's two parameters; malformed ids are "not found" and never reach the database. */
function itemsParams(items: readonly DeadLetterItem[]): [string[], string] {
  const ids: string[] = [];
  const byId: Record<string, unknown[]> = {};
  for (const item of items) {
    // Keyed as Postgres prints a uuid (lower case). A repeated id would make the DELETE match once; keep
    // the first, as the single-call order would.
    const key = isUuid(item.id) ? item.id.toLowerCase() : null;
    if (key === null || key in byId) continue;
    ids.push(key);
    const tags = item.tags ?? null;
    byId[key] =
      tags === null ? [item.attempt, item.reason, item.error] : [item.attempt, item.reason, item.error, tags];
  }
  return [ids, JSON.stringify(byId)];
}

export async function markJobsDeadLetter(
  ctx: PgContext,
  items: readonly DeadLetterItem[],
): Promise<string[]> {
  const params = itemsParams(items);
  if (params[0].length === 0) return [];
  const interrupt = ctx.testHooks.interruptDeadLetterMove?.();
  if (interrupt) return moveInterrupted(ctx, params, items[0]?.id ?? "", interrupt);
  const res = await query<{ id: string }>(ctx, "markJobsDeadLetter", {
    name: ctx.asyncOutcomes ? "soniq_dlq_move_batch_async" : "soniq_dlq_move_batch",
    text: ctx.asyncOutcomes ? BATCH.async : BATCH.sync,
    values: params,
  });
  return res.rows.map((r) => r.id);
}

/**
 * Test-only path: the same statement inside an explicit transaction on a dedicated connection, with the
 * fault hook awaited before COMMIT, so the kit can kill the connection and see that nothing moved.
 */
function moveInterrupted(
  ctx: PgContext,
  params: [string[], string],
  firstId: string,
  interrupt: DeadLetterInterrupt,
): Promise<string[]> {
  return inDedicatedTransaction(ctx, "markJobsDeadLetter", firstId, async (client, pid) => {
    const res = await client.query<{ id: string }>(BATCH.sync, params);
    await interrupt(firstId, { pid });
    await client.query("COMMIT");
    return res.rows.map((r) => r.id);
  });
}
