/**
 * `runs.settle` as ONE statement: any mix of done / requeue / dead_letter items, each fenced by
 * `status = 'processing' AND attempts = <the claim's attempt>` and, when the call names its worker, by
 * `worker_id = <that worker>` (the worker's id travels in the items object under the key `w`, which no job
 * id can be), written by data-modifying CTEs of one statement (one implicit transaction, one round trip):
 *
 * - `done`: UPDATE to done with the result and `expires_at = now() + ttl` (items with resultTtlMs > 0);
 * - `deleted`: DELETE of the done items with resultTtlMs 0;
 * - `requeued`: UPDATE back to queued with the attempts and last_error core chose (a null lastError keeps
 *   the stored one), worker_id cleared, due `now() + delay` by the database's clock;
 * - `moved` + `dead`: DELETE ... RETURNING of the dead_letter rows feeding the INSERT into
 *   soniq_dead_letter_jobs.
 *
 * The ids of jobs that finished (done, deleted, dead) are announced on `soniq_job_finished` (comma-separated,
 * at most FINISHED_IDS_PER_NOTIFY per NOTIFY so a payload stays under Postgres's 8000 bytes), sent at commit;
 * `waitFor` listens to it (core's results.ts). A requeue-only call sends nothing.
 *
 * The final SELECT returns the ids that applied (each CTE returns only the rows it wrote). Only the parts a
 * call holds are in its statement: one named statement per combination (at most 15, x2 with asyncOutcomes).
 *
 * Linear whatever the statistics say: each CTE finds its rows by `id = ANY($n::uuid[])` (primary-key
 * lookups) and reads each row's item from one jsonb object keyed by id (`$1 -> id::text`, a binary search).
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
import type { NewWebhookDelivery, Settlement } from "@soniq/core/backend";
import { ASYNC_COMMIT } from "./context.js";
import { FINISHED_CHANNEL, FINISHED_IDS_PER_NOTIFY } from "./listen-client.js";
import { deliveriesParam, outboxCte } from "./webhook-rows.js";

/**
 * The fence on the job's status is written `(status || '') = 'processing'`, not `status = 'processing'`: the
 * plain form matches the partial processing index's predicate, and the prepared statement's generic plan
 * then ANDed a bitmap of that whole index (every processing entry, and every dead one left until a vacuum)
 * with the primary-key lookups. With autovacuum behind, each settle read all the entries of every job
 * claimed since the last vacuum (30,000 entries, a quarter of a 300-item settle's time, bench/README.md);
 * this form is only a filter on the rows the ids found.
 */
export const PROCESSING = "(status || '') = 'processing'";
/** Where the items object carries the calling worker's id. */
const WORKER_KEY = "w";
/**
 * The calling worker's claim: any worker when the call names none. Scalar subqueries, so the worker id is read
 * from the items object once per statement (an InitPlan), not once per row.
 */
const worker = (column: string) =>
  `((SELECT $1::jsonb ->> '${WORKER_KEY}') IS NULL OR ${column} = (SELECT ($1::jsonb ->> '${WORKER_KEY}')::uuid))`;
const FENCE = `${PROCESSING} AND attempts = ($1::jsonb -> id::text ->> 0)::int AND ${worker("worker_id")}`;

const DEAD_LETTER_INSERT_COLUMNS =
  "id, job_name, args, queue, priority, max_attempts, attempts, last_error, dead_letter_reason, tags, original_created_at, " +
  "flow_id, step_ref, trace_id, trace_context, args_version";

/** The item kinds as the statement writes them, in parameter order ($2, $3, ... for the present ones). */
export const SETTLE_PARTS = ["done", "requeued", "deleted", "dead"] as const;
export type SettlePart = (typeof SETTLE_PARTS)[number];

/** One part's CTE(s); `$ids` is its id array parameter. */
function partSql(part: SettlePart, ids: string, from: string, using: string, keys: string): string {
  switch (part) {
    case "done":
      return `done AS (
  UPDATE soniq_jobs SET status = 'done', result = $1::jsonb -> id::text -> 2, updated_at = now(),
    expires_at = now() + ($1::jsonb -> id::text ->> 1)::float8 * interval '1 millisecond'${from}
  WHERE id = ANY(${ids}::uuid[]) AND ${FENCE}
  RETURNING id)`;
    case "requeued":
      return `requeued AS (
  UPDATE soniq_jobs SET status = 'queued', attempts = ($1::jsonb -> id::text ->> 1)::int,
    last_error = COALESCE($1::jsonb -> id::text ->> 3, last_error), worker_id = NULL,
    scheduled_at = now() + ($1::jsonb -> id::text ->> 2)::float8 * interval '1 millisecond',
    updated_at = now()${keys}${from}
  WHERE id = ANY(${ids}::uuid[]) AND ${FENCE}
  RETURNING id)`;
    case "deleted":
      return `deleted AS (
  DELETE FROM soniq_jobs${using}
  WHERE id = ANY(${ids}::uuid[]) AND ${FENCE}
  RETURNING id)`;
    case "dead":
      return `moved AS (
  DELETE FROM soniq_jobs j${using}
  WHERE j.id = ANY(${ids}::uuid[]) AND (j.status || '') = 'processing' AND j.attempts = ($1::jsonb -> j.id::text ->> 0)::int
    AND ${worker("j.worker_id")}
    AND NOT EXISTS (SELECT 1 FROM soniq_dead_letter_jobs d WHERE d.id = j.id)
  RETURNING j.id, j.job_name, j.args, j.queue, j.priority, j.max_attempts, j.attempts, j.created_at, j.flow_id,
    j.step_ref, j.trace_id, j.trace_context, j.args_version),
dead AS (
  INSERT INTO soniq_dead_letter_jobs (${DEAD_LETTER_INSERT_COLUMNS})
  SELECT id, job_name, args, queue, priority, max_attempts, attempts, $1::jsonb -> id::text ->> 2,
    $1::jsonb -> id::text ->> 1, $1::jsonb -> id::text -> 3, created_at, flow_id, step_ref, trace_id, trace_context,
    args_version
    FROM moved
  RETURNING id)`;
  }
}

/**
 * The statement text for the parts a call holds (only those, so a drain's all-done flush plans and runs
 * one CTE, as the single-kind statements did). `keys` is a SET fragment from requeue-keys.ts (empty on
 * the hot path); `asyncCommit` adds the synchronous_commit-off item to every writing CTE (whichever
 * writes, the setting is made). $1 is the items object keyed by id: done [attempt, resultTtlMs, result?],
 * requeue [attempt, attempts, delayMs, lastError], dead_letter [attempt, reason, error, tags?] (a missing
 * last element is SQL NULL); $2, $3, ... the id arrays of the present parts, in `SETTLE_PARTS` order.
 */
export function settleSql(
  parts: readonly SettlePart[],
  asyncCommit: boolean,
  keys: string,
  outbox = false,
): string {
  const from = asyncCommit ? `\n  FROM ${ASYNC_COMMIT}` : "";
  const using = asyncCommit ? ` USING ${ASYNC_COMMIT}` : "";
  const ctes = parts.map((part, i) => partSql(part, `$${i + 2}`, from, using, keys));
  const results = parts.map((part) => `SELECT id::text FROM ${part}`);
  // The webhook deliveries of the items that applied (owner among the ids the parts wrote), last parameter.
  if (outbox) ctes.push(outboxCte(`$${parts.length + 2}`, `d.owner IN (${results.join(" UNION ALL ")})`));
  const finished = parts.filter((part) => part !== "requeued");
  if (finished.length > 0) {
    const ids = finished.map((part) => `SELECT id FROM ${part}`).join(" UNION ALL ");
    ctes.push(`notified AS (
  SELECT count(pg_notify('${FINISHED_CHANNEL}', ids)) AS n FROM (
    SELECT string_agg(id::text, ',') AS ids
    FROM (SELECT id, (row_number() OVER ()) / ${FINISHED_IDS_PER_NOTIFY} AS chunk FROM (${ids}) f) c
    GROUP BY chunk) s)`);
    // Referenced (and never true), so the notifying CTE runs: a plain SELECT CTE nobody reads is skipped.
    results.push("SELECT NULL FROM notified WHERE n < 0");
  }
  return `WITH ${ctes.join(",\n")}\n${results.join("\nUNION ALL ")}`;
}

/** A settle call encoded as the statement's parameters. */
export interface EncodedSettle {
  /** The parts the call holds, in `SETTLE_PARTS` order. */
  parts: SettlePart[];
  /** $1 the items object, then one id array per part, then (with `outbox`) the deliveries. */
  values: [string, ...(string[] | string)[]];
  /** Input position of the item that owns each id (the first one: a repeated id is not applied again). */
  owner: Map<string, number>;
  /** The first dead_letter item's id, or null when the call holds none. */
  firstDeadLetterId: string | null;
  /** Whether `values` ends with the items' webhook deliveries (the statement then has the outbox CTE). */
  outbox: boolean;
}

export function encodeSettle(items: readonly Settlement[], workerId?: string): EncodedSettle {
  const ids: Record<SettlePart, string[]> = { done: [], requeued: [], deleted: [], dead: [] };
  const byId: Record<string, unknown> = {};
  if (workerId !== undefined) byId[WORKER_KEY] = workerId;
  const owner = new Map<string, number>();
  const deliveries: (NewWebhookDelivery & { owner: string })[] = [];
  items.forEach((item, index) => {
    if (owner.has(item.id)) return;
    owner.set(item.id, index);
    for (const d of item.deliveries ?? []) deliveries.push({ ...d, owner: item.id });
    if (item.kind === "done") {
      ids[item.resultTtlMs > 0 ? "done" : "deleted"].push(item.id);
      byId[item.id] =
        item.result === undefined || item.result === null
          ? [item.attempt, item.resultTtlMs]
          : [item.attempt, item.resultTtlMs, item.result];
    } else if (item.kind === "requeue") {
      ids.requeued.push(item.id);
      byId[item.id] = [item.attempt, item.attempts, item.delayMs, item.lastError];
    } else {
      ids.dead.push(item.id);
      byId[item.id] =
        item.tags === null
          ? [item.attempt, item.reason, item.error]
          : [item.attempt, item.reason, item.error, item.tags];
    }
  });
  const parts = SETTLE_PARTS.filter((part) => ids[part].length > 0);
  const values: EncodedSettle["values"] = [JSON.stringify(byId), ...parts.map((part) => ids[part])];
  if (deliveries.length > 0) values.push(deliveriesParam(deliveries));
  return {
    parts,
    values,
    owner,
    firstDeadLetterId: ids.dead[0] ?? null,
    outbox: deliveries.length > 0,
  };
}

/** Per item, whether it applied: it owns its id (first of a repeat) and the statement returned that id. */
export function settledFlags(
  items: readonly Settlement[],
  encoded: EncodedSettle,
  rows: readonly unknown[][],
): boolean[] {
  const applied = new Set(rows.map((row) => String(row[0])));
  return items.map((item, index) => encoded.owner.get(item.id) === index && applied.has(item.id));
}
