/** Reading, replaying and purging dead-letter rows (the operator's side of the dead-letter table). */
import type { DeadLetterFilter, DeadLetterJob, ReplayOptions } from "@soniq/core";
import { type PgContext, query } from "./context.js";
import { isUuid } from "./errors.js";
import { type Condition, listQuery, pageOf } from "./list-query.js";
import { NEW_JOB_CHANNEL } from "./listen.js";
import { DEAD_LETTER_COLUMNS, mapDeadLetterJob, type Row } from "./rows.js";

export async function listDeadLetterJobs(
  ctx: PgContext,
  filter: DeadLetterFilter = {},
): Promise<DeadLetterJob[]> {
  const page = pageOf("listDeadLetterJobs", filter);
  const conditions: Condition[] = [];
  if (filter.jobName !== undefined) conditions.push(["job_name = ?", filter.jobName]);
  if (filter.queue !== undefined) conditions.push(["queue = ?", filter.queue]);
  if (filter.reason !== undefined) conditions.push(["dead_letter_reason = ?", filter.reason]);
  if (filter.since !== undefined) conditions.push(["moved_to_dead_letter_at >= ?", filter.since]);
  if (filter.until !== undefined) conditions.push(["moved_to_dead_letter_at < ?", filter.until]);
  const select = `SELECT ${DEAD_LETTER_COLUMNS} FROM soniq_dead_letter_jobs`;
  const order = "moved_to_dead_letter_at DESC, id";
  const res = await query<Row>(ctx, "listDeadLetterJobs", listQuery(select, conditions, order, page));
  return res.rows.map(mapDeadLetterJob);
}

export async function getDeadLetterJob(ctx: PgContext, id: string): Promise<DeadLetterJob | null> {
  if (!isUuid(id)) return null;
  const res = await query<Row>(ctx, "getDeadLetterJob", {
    name: "soniq_dlq_get",
    text: `SELECT ${DEAD_LETTER_COLUMNS} FROM soniq_dead_letter_jobs WHERE id = $1`,
    values: [id],
  });
  const row = res.rows[0];
  return row ? mapDeadLetterJob(row) : null;
}

// One statement: the count bump and the new job commit together, and the NOTIFY goes out on commit.
const REPLAY = `WITH bumped AS (
  UPDATE soniq_dead_letter_jobs
  SET resurrection_count = resurrection_count + 1, last_resurrection_at = now()
  WHERE id = $1
  RETURNING job_name, args, queue, priority, max_attempts),
inserted AS (
  INSERT INTO soniq_jobs (id, job_name, args, queue, priority, max_attempts, scheduled_at)
  SELECT $2, job_name, args, COALESCE($3::text, queue), COALESCE($4::int, priority), max_attempts,
         COALESCE($5::timestamptz, now())
  FROM bumped
  RETURNING id, queue)
SELECT id, pg_notify('${NEW_JOB_CHANNEL}', queue) FROM inserted`;

export async function replayDeadLetterJob(
  ctx: PgContext,
  id: string,
  options: ReplayOptions,
): Promise<string | null> {
  if (!isUuid(id)) return null;
  const res = await query<{ id: string }>(ctx, "replayDeadLetterJob", {
    name: "soniq_dlq_replay",
    text: REPLAY,
    values: [id, options.newId, options.queue ?? null, options.priority ?? null, options.scheduledAt ?? null],
  });
  return res.rows[0]?.id ?? null;
}

export async function purgeDeadLetterJob(ctx: PgContext, id: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  const res = await query(ctx, "purgeDeadLetterJob", {
    name: "soniq_dlq_purge",
    text: "DELETE FROM soniq_dead_letter_jobs WHERE id = $1",
    values: [id],
  });
  return res.rowCount === 1;
}
