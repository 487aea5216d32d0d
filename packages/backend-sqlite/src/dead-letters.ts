/**
 * The deadLetters facet: reads over soniq_dead_letter_jobs, replay (a fresh queued job from a moved
 * row) and purge. Rows get here through `runs.settle` (runs.ts), the only move. A dead letter keeps its job's
 * checkpoints and signals (same id): a replay carries them to the new job, a purge deletes them.
 */
import {
  type AuditRecord,
  type DeadLetterJob,
  type DeadLetterListQuery,
  type DeadLetterMatch,
  type DeadLettersFacet,
  purgeStep,
  type ReplayRequest,
  replayStep,
} from "@soniq/core/backend";
import { writeAudit } from "./internal/audit-rows.js";
import { immediate, runSync, type SqliteContext } from "./internal/context.js";
import { runFlow } from "./internal/flow-store.js";
import { type DeadLetterRecord, toDeadLetterJob } from "./internal/rows.js";
import { DEAD_LETTER_COLUMNS, msOrNull, NOW, pageSql, searchAndIds } from "./internal/sql.js";
import { carrySteps, deleteStepsOf, encodeResolve } from "./internal/step-rows.js";
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
          const row = ctx.statement(PURGE).get(id) as FlowOfRow | undefined;
          if (row === undefined) return false;
          if (row.flow_id !== null && row.step_ref !== null) {
            runFlow(ctx, purgeStep(row.flow_id, row.step_ref, id, new Date()));
          }
          deleteStepsOf(ctx, id);
          if (audit) writeAudit(ctx, audit);
          return true;
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
  where.push(...searchAndIds(query, params));
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
    priority, unique_job, scheduled_at, created_at, updated_at, flow_id, step_ref, args_version, trace_id,
    trace_context)
  SELECT @newId, job_name, args, 'queued', 0, max_attempts, COALESCE(@queue, queue),
    COALESCE(@priority, priority), 0, COALESCE(@scheduledAt, ${NOW}), ${NOW}, ${NOW},
    CASE WHEN @rejoin THEN flow_id END, CASE WHEN @rejoin THEN step_ref END, args_version, @traceId,
    @traceContext
  FROM soniq_dead_letter_jobs WHERE id = @id
  RETURNING queue`;

const FLOW_OF = "SELECT flow_id, step_ref FROM soniq_dead_letter_jobs WHERE id = ?";

interface FlowOfRow {
  flow_id: string | null;
  step_ref: string | null;
}

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
  const keepSteps = request.steps?.keep ?? true;
  const resolve = encodeResolve(request.steps);
  const row = immediate(ctx, () => {
    // A step's dead letter rejoins its flow: the new job takes the step's place (flow-engine.ts decides).
    const flow = ctx.statement(FLOW_OF).get(id) as FlowOfRow | undefined;
    const rejoin =
      flow?.flow_id != null &&
      flow.step_ref !== null &&
      runFlow(ctx, replayStep(flow.flow_id, flow.step_ref, id, request.newId, new Date()));
    const inserted = ctx.statement(REPLAY_INSERT).get({
      rejoin: rejoin ? 1 : 0,
      id,
      newId: request.newId,
      queue: request.queue,
      priority: request.priority,
      scheduledAt: msOrNull(request.scheduledAt),
      traceId: request.traceId,
      traceContext: request.traceContext === null ? null : JSON.stringify(request.traceContext),
    }) as { queue: string } | undefined;
    if (!inserted) return undefined;
    ctx.statement(REPLAY_BUMP).run(id);
    // The checkpoints the new job resumes from, and the signals sent to the dead letter.
    carrySteps(ctx, id, request.newId, keepSteps, resolve);
    writeDeliveries(ctx, request.deliveries);
    if (audit) writeAudit(ctx, audit);
    return inserted;
  });
  if (!row) return null;
  ctx.notify(row.queue);
  return request.newId;
}

const PURGE = "DELETE FROM soniq_dead_letter_jobs WHERE id = ? RETURNING flow_id, step_ref";
