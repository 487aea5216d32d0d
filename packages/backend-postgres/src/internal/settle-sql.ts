/**
 * `runs.settle` as ONE statement: any mix of done / requeue / dead_letter items, each fenced by
 * `status = 'processing' AND attempts = <the claim's attempt>`, written by data-modifying CTEs of one
 * statement (one implicit transaction, one round trip):
 *
 * - `done`: UPDATE to done with the result and `expires_at = now() + ttl` (items with resultTtlMs > 0);
 * - `deleted`: DELETE of the done items with resultTtlMs 0;
 * - `requeued`: UPDATE back to queued with the attempts and last_error core chose (a null lastError keeps
 *   the stored one), worker_id cleared, due `now() + delay` by the database's clock;
 * - `moved` + `dead`: DELETE ... RETURNING of the dead_letter rows feeding the INSERT into
 *   soniq_dead_letter_jobs.
 *
 * The final SELECT returns the ids that applied (each CTE returns only the rows it wrote).
 *
 * Linear whatever the statistics say: each CTE finds its rows by `id = ANY($n::uuid[])` (primary-key
 * lookups) and reads each row's item from one jsonb object keyed by id (`$5 -> id::text`, a binary search).
 * Joins with unnest() or jsonb_to_recordset were planned as nested loops that re-read the item list per
 * row (quadratic: a 4,700-item completion took 8.8 s, 500 dead-letter items 58 ms); test/settle-plan.test.ts
 * EXPLAINs this statement with 500 items.
 *
 * Dead-letter conflicts: an item whose id already has a dead-letter row is not applied and its job row is
 * left untouched. The DELETE excludes such ids (NOT EXISTS), rather than the INSERT skipping them with
 * ON CONFLICT DO NOTHING, which would let the DELETE commit and lose the job. Soniq writes dead-letter
 * ids only by moving a job row, and every move first locks that row (the DELETE), so a second move of the
 * same job waits, then finds the row gone: no conflicting row can appear between the check and the INSERT
 * from Soniq itself. If something else inserts one concurrently, the INSERT raises a unique violation, the
 * statement fails as a whole and nothing changes (`SONIQ_DEAD_LETTER_CONFLICT`; the worker's writer retries
 * and the retry skips that item).
 */
import type { Settlement } from "@soniq/core/backend";
import { ASYNC_COMMIT } from "./context.js";

const FENCE = "status = 'processing' AND attempts = ($5::jsonb -> id::text ->> 0)::int";

const DEAD_LETTER_INSERT_COLUMNS =
  "id, job_name, args, queue, priority, max_attempts, attempts, last_error, dead_letter_reason, tags, original_created_at";

/**
 * The statement text. `keys` is a SET fragment from requeue-keys.ts (empty on the hot path); `asyncCommit`
 * adds the synchronous_commit-off item to every writing CTE (whichever writes, the setting is made).
 * $1 done (kept) ids, $2 requeue ids, $3 done (deleted) ids, $4 dead_letter ids, $5 items by id:
 * done [attempt, resultTtlMs, result?], requeue [attempt, attempts, delayMs, lastError],
 * dead_letter [attempt, reason, error, tags?] (a missing last element is SQL NULL).
 */
export function settleSql(asyncCommit: boolean, keys: string): string {
  const from = asyncCommit ? `\n  FROM ${ASYNC_COMMIT}` : "";
  const using = asyncCommit ? ` USING ${ASYNC_COMMIT}` : "";
  return `WITH done AS (
  UPDATE soniq_jobs SET status = 'done', result = $5::jsonb -> id::text -> 2, updated_at = now(),
    expires_at = now() + ($5::jsonb -> id::text ->> 1)::float8 * interval '1 millisecond'${from}
  WHERE id = ANY($1::uuid[]) AND ${FENCE}
  RETURNING id),
requeued AS (
  UPDATE soniq_jobs SET status = 'queued', attempts = ($5::jsonb -> id::text ->> 1)::int,
    last_error = COALESCE($5::jsonb -> id::text ->> 3, last_error), worker_id = NULL,
    scheduled_at = now() + ($5::jsonb -> id::text ->> 2)::float8 * interval '1 millisecond',
    updated_at = now()${keys}${from}
  WHERE id = ANY($2::uuid[]) AND ${FENCE}
  RETURNING id),
deleted AS (
  DELETE FROM soniq_jobs${using}
  WHERE id = ANY($3::uuid[]) AND ${FENCE}
  RETURNING id),
moved AS (
  DELETE FROM soniq_jobs j${using}
  WHERE j.id = ANY($4::uuid[]) AND j.status = 'processing' AND j.attempts = ($5::jsonb -> j.id::text ->> 0)::int
    AND NOT EXISTS (SELECT 1 FROM soniq_dead_letter_jobs d WHERE d.id = j.id)
  RETURNING j.id, j.job_name, j.args, j.queue, j.priority, j.max_attempts, j.attempts, j.created_at),
dead AS (
  INSERT INTO soniq_dead_letter_jobs (${DEAD_LETTER_INSERT_COLUMNS})
  SELECT id, job_name, args, queue, priority, max_attempts, attempts, $5::jsonb -> id::text ->> 2,
    $5::jsonb -> id::text ->> 1, $5::jsonb -> id::text -> 3, created_at FROM moved
  RETURNING id)
SELECT id::text FROM done UNION ALL SELECT id::text FROM requeued
UNION ALL SELECT id::text FROM deleted UNION ALL SELECT id::text FROM dead`;
}

/** A settle call encoded as the statement's parameters. */
export interface EncodedSettle {
  values: [string[], string[], string[], string[], string];
  /** Input position of the item that owns each id (the first one: a repeated id is not applied again). */
  owner: Map<string, number>;
  /** The first dead_letter item's id, or null when the call holds none. */
  firstDeadLetterId: string | null;
}

export function encodeSettle(items: readonly Settlement[]): EncodedSettle {
  const doneKept: string[] = [];
  const requeued: string[] = [];
  const doneDeleted: string[] = [];
  const dead: string[] = [];
  const byId: Record<string, unknown[]> = {};
  const owner = new Map<string, number>();
  items.forEach((item, index) => {
    if (owner.has(item.id)) return;
    owner.set(item.id, index);
    if (item.kind === "done") {
      (item.resultTtlMs > 0 ? doneKept : doneDeleted).push(item.id);
      byId[item.id] =
        item.result === undefined || item.result === null
          ? [item.attempt, item.resultTtlMs]
          : [item.attempt, item.resultTtlMs, item.result];
    } else if (item.kind === "requeue") {
      requeued.push(item.id);
      byId[item.id] = [item.attempt, item.attempts, item.delayMs, item.lastError];
    } else {
      dead.push(item.id);
      byId[item.id] =
        item.tags === null
          ? [item.attempt, item.reason, item.error]
          : [item.attempt, item.reason, item.error, item.tags];
    }
  });
  return {
    values: [doneKept, requeued, doneDeleted, dead, JSON.stringify(byId)],
    owner,
    firstDeadLetterId: dead[0] ?? null,
  };
}
