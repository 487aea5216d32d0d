/** Reads over soniq_dead_letter_jobs. */
import type { DeadLetterFilter, DeadLetterJob } from "@soniq/core";
import type { SqliteContext } from "./context.js";
import { pageOf } from "./jobs.js";
import { type DeadLetterRecord, toDeadLetterJob } from "./rows.js";
import { DEAD_LETTER_COLUMNS } from "./sql.js";

export function getDeadLetterJob(ctx: SqliteContext, id: string): DeadLetterJob | null {
  if (typeof id !== "string") return null;
  const row = ctx
    .statement(`SELECT ${DEAD_LETTER_COLUMNS} FROM soniq_dead_letter_jobs WHERE id = ?`)
    .get(id) as DeadLetterRecord | undefined;
  return row ? toDeadLetterJob(row) : null;
}

export function listDeadLetterJobs(ctx: SqliteContext, filter: DeadLetterFilter = {}): DeadLetterJob[] {
  const { limit, offset } = pageOf(filter);
  const where: string[] = [];
  const params: Record<string, unknown> = { limit, offset };
  const add = (clause: string, name: string, value: unknown) => {
    where.push(clause);
    params[name] = value;
  };
  if (filter.jobName !== undefined) add("job_name = @jobName", "jobName", filter.jobName);
  if (filter.queue !== undefined) add("queue = @queue", "queue", filter.queue);
  if (filter.reason !== undefined) add("dead_letter_reason = @reason", "reason", filter.reason);
  if (filter.since !== undefined) add("moved_to_dead_letter_at >= @since", "since", filter.since.getTime());
  if (filter.until !== undefined) add("moved_to_dead_letter_at < @until", "until", filter.until.getTime());
  const sql = `SELECT ${DEAD_LETTER_COLUMNS} FROM soniq_dead_letter_jobs
    ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
    ORDER BY moved_to_dead_letter_at DESC, rowid DESC LIMIT @limit OFFSET @offset`;
  return (ctx.statement(sql).all(params) as DeadLetterRecord[]).map(toDeadLetterJob);
}
