/**
 * The deadLetters facet: reads over soniq_dead_letter_jobs, replay (a fresh queued job from a moved
 * row) and purge. Rows get here through `runs.settle` (runs.ts), the only move.
 */
import type {
  AuditRecord,
  DeadLetterJob,
  DeadLetterListQuery,
  DeadLetterMatch,
  DeadLettersFacet,
  ReplayRequest,
} from "@soniq/core/backend";
import { writeAudit } from "./internal/audit-rows.js";
import { immediate, runSync, type SqliteContext } from "./internal/context.js";
import { type DeadLetterRecord, toDeadLetterJob } from "./internal/rows.js";
import { DEAD_LETTER_COLUMNS, msOrNull, NOW, pageSql } from "./internal/sql.js";
import { writeDeliveries } from "./internal/webhook-rows.js";

export function deadLettersFacet(ctx: SqliteContext): DeadLettersFacet {
  return {
    list: (query) => runSync("deadLetters.list", () => list(ctx, query)),
    count: (query) => runSync("deadLetters.count", () => count(ctx, query)),
    get: (id) =>
      runSync("deadLetters.get", () => {
        const row = ctx.statement(GET).get(id) as DeadLetterRecord | undefined;
        return row ? toDeadLetterJob(row) : null;
      }),
    replay: (id, request, audit) => runSync("deadLetters.replay", () => replay(ctx, id, request, audit)),
    purge: (id, audit) =>
      runSync("deadLetters.purge", () =>
        immediate(ctx, () => {
          const purged = ctx.statement(PURGE).run(id).changes > 0;
          if (purged && audit) writeAudit(ctx, audit);
          return purged;
        }),
      ),
  };
}

const GET = `SELECT ${DEAD_LETTER_COLUMNS} FROM soniq_dead_letter_jobs WHERE id = ?`;

/** The filter's conditions, their values added to `params`. */
function matching(query: DeadLetterMatch, params: Record<string, unknown>): string[] {
  const where: string[] = [];
  const add = (clause: string, name: string, value: unknown) => {
    where.push(clause);
    params[name] = value;
  };
  if (query.jobName !== null) add("job_name = @jobName", "jobName", query.jobName);
  if (query.queue !== null) add("queue = @queue", "queue", query.queue);
  if (query.reason !== null) add("dead_letter_reason = @reason", "reason", query.reason);
  if (query.since !== null) add("moved_to_dead_letter_at >= @since", "since", query.since.getTime());
  if (query.until !== null) add("moved_to_dead_letter_at < @until", "until", query.until.getTime());
  return where;
}

function list(ctx: SqliteContext, query: DeadLetterListQuery): DeadLetterJob[] {
  const params: Record<string, unknown> = {};
  const page = pageSql("moved_to_dead_letter_at", query, matching(query, params), params);
  const sql = `SELECT ${DEAD_LETTER_COLUMNS} FROM soniq_dead_letter_jobs ${page}`;
  return (ctx.statement(sql).all(params) as DeadLetterRecord[]).map(toDeadLetterJob);
}

function count(ctx: SqliteContext, query: DeadLetterMatch): number {
  const params: Record<string, unknown> = {};
  const where = matching(query, params);
  const sql = `SELECT count(*) AS n FROM soniq_dead_letter_jobs ${where.length ? `WHERE ${where.join(" AND ")}` : ""}`;
  return (ctx.statement(sql).get(params) as { n: number }).n;
}

const REPLAY_INSERT = `INSERT INTO soniq_jobs (id, job_name, args, status, attempts, max_attempts, queue,
    priority, unique_job, scheduled_at, created_at, updated_at)
  SELECT @newId, job_name, args, 'queued', 0, max_attempts, COALESCE(@queue, queue),
    COALESCE(@priority, priority), 0, COALESCE(@scheduledAt, ${NOW}), ${NOW}, ${NOW}
  FROM soniq_dead_letter_jobs WHERE id = @id
  RETURNING queue`;

const REPLAY_BUMP = `UPDATE soniq_dead_letter_jobs
  SET resurrection_count = resurrection_count + 1, last_resurrection_at = ${NOW}
  WHERE id = ?`;

/** Mint a fresh queued job from a dead-letter row and count the resurrection, in one transaction. */
function replay(
  ctx: SqliteContext,
  id: string,
  request: ReplayRequest,
  audit: AuditRecord | undefined,
): string | null {
  const row = immediate(ctx, () => {
    const inserted = ctx.statement(REPLAY_INSERT).get({
      id,
      newId: request.newId,
      queue: request.queue,
      priority: request.priority,
      scheduledAt: msOrNull(request.scheduledAt),
    }) as { queue: string } | undefined;
    if (inserted) ctx.statement(REPLAY_BUMP).run(id);
    if (inserted) writeDeliveries(ctx, request.deliveries);
    if (inserted && audit) writeAudit(ctx, audit);
    return inserted;
  });
  if (!row) return null;
  ctx.notify(row.queue);
  return request.newId;
}

const PURGE = "DELETE FROM soniq_dead_letter_jobs WHERE id = ?";
