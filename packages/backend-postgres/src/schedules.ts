/**
 * The schedules facet: recurring-job declarations (soniq_recurring_jobs, `id` = the schedule's name) and
 * the tick ledger (soniq_schedule_ticks, primary key (schedule_name, tick_at)).
 *
 * `recordTick` is one transaction on one pooled connection: it locks the schedule row (FOR UPDATE), so
 * concurrent recorders of a schedule take turns and the second finds the first one's ledger row and
 * changes nothing; then it enqueues the job (the same statement as `jobs.enqueue`, inside the
 * transaction; its NOTIFY is delivered on commit), inserts the ledger row and advances the schedule.
 * An operator action's audit row commits with its change: in setPaused's and remove's one statement, in
 * recordTick's transaction for a manual trigger.
 */
import type {
  AuditRecord,
  ScheduleDeclaration,
  SchedulesFacet,
  TickRecord,
  TickRecordResult,
} from "@soniq/core/backend";
import {
  recurringStatus,
  resolveTick,
  SCHEDULE_COLUMNS,
  TICK_COLUMNS,
  toStoredTiming,
  triggerAudit,
} from "@soniq/core/backend";
import type pg from "pg";
import { auditCte, auditValues, writeAudit } from "./internal/audit-rows.js";
import { type PgContext, query } from "./internal/context.js";
import { enqueueMany } from "./internal/enqueue.js";
import { type ScheduleRecord, type TickRow, toSchedule, toTick } from "./internal/schedule-rows.js";
import { inTransaction } from "./internal/tx.js";
import { writeDeliveries } from "./internal/webhook-rows.js";

export function schedulesFacet(ctx: PgContext): SchedulesFacet {
  return {
    upsert: async (declarations) => {
      if (declarations.length === 0) return;
      await query(ctx, "schedules.upsert", { text: UPSERT, values: [upsertPayload(declarations)] });
    },
    list: async () =>
      (await query<ScheduleRecord & pg.QueryResultRow>(ctx, "schedules.list", { text: LIST })).rows.map(
        toSchedule,
      ),
    get: async (name) => {
      const res = await query<ScheduleRecord & pg.QueryResultRow>(ctx, "schedules.get", {
        text: GET,
        values: [name],
      });
      const row = res.rows[0];
      return row === undefined ? null : toSchedule(row);
    },
    setPaused: (name, paused, audit) =>
      changed(ctx, "schedules.setPaused", SET_PAUSED, [name, recurringStatus(paused)], audit),
    remove: (name, audit) => changed(ctx, "schedules.remove", REMOVE, [name], audit),
    recordTick: (tick, audit) =>
      inTransaction(ctx, "schedules.recordTick", async (client) => {
        const result = await recordTick(ctx, client, tick);
        if (result.status === "recorded") await writeDeliveries(client, tick.deliveries);
        const row = triggerAudit(audit, result);
        if (row !== null) await writeAudit(client, row);
        return result;
      }),
    history: async (name, { limit }) => {
      const res = await query<TickRow & pg.QueryResultRow>(ctx, "schedules.history", {
        text: HISTORY,
        values: [name, limit],
      });
      return res.rows.map(toTick);
    },
  };
}

// An unchanged timing (type, value, timezone) keeps next_run_at; SET expressions read the old row. Args that are
// JSON null arrive as SQL NULL from jsonb_to_recordset and are stored as JSON null.
const UPSERT = `INSERT INTO soniq_recurring_jobs AS r (id, job_name, schedule_type, schedule_value, timezone, args,
    catch_up, queue, priority, max_attempts, status, next_run_at)
  SELECT x.id, x.job_name, x.schedule_type, x.schedule_value, x.timezone, COALESCE(x.args, 'null'::jsonb), x.catch_up,
    x.queue, x.priority, x.max_attempts, x.status, x.next_run_at
  FROM jsonb_to_recordset($1::jsonb) AS x(id text, job_name text, schedule_type text,
    schedule_value text, timezone text, args jsonb, catch_up jsonb, queue text, priority int, max_attempts int,
    status text, next_run_at timestamptz)
  ON CONFLICT (id) DO UPDATE SET job_name = EXCLUDED.job_name, args = EXCLUDED.args, catch_up = EXCLUDED.catch_up,
    queue = EXCLUDED.queue, priority = EXCLUDED.priority, max_attempts = EXCLUDED.max_attempts,
    next_run_at = CASE WHEN r.schedule_type IS NOT DISTINCT FROM EXCLUDED.schedule_type
      AND r.schedule_value IS NOT DISTINCT FROM EXCLUDED.schedule_value
      AND r.timezone IS NOT DISTINCT FROM EXCLUDED.timezone THEN r.next_run_at ELSE EXCLUDED.next_run_at END,
    schedule_type = EXCLUDED.schedule_type, schedule_value = EXCLUDED.schedule_value,
    timezone = EXCLUDED.timezone, updated_at = now()`;
const LIST = `SELECT ${SCHEDULE_COLUMNS} FROM soniq_recurring_jobs ORDER BY id`;
const GET = `SELECT ${SCHEDULE_COLUMNS} FROM soniq_recurring_jobs WHERE id = $1`;
const SET_PAUSED = `WITH changed AS (UPDATE soniq_recurring_jobs SET status = $2, updated_at = now()
    WHERE id = $1 RETURNING id)`;
const REMOVE = `WITH ticks AS (DELETE FROM soniq_schedule_ticks WHERE schedule_name = $1),
  changed AS (DELETE FROM soniq_recurring_jobs WHERE id = $1 RETURNING id)`;
const LOCK = "SELECT status FROM soniq_recurring_jobs WHERE id = $1 FOR UPDATE";
const FIND_TICK = `SELECT ${TICK_COLUMNS} FROM soniq_schedule_ticks WHERE schedule_name = $1 AND tick_at = $2`;
const INSERT_TICK = `INSERT INTO soniq_schedule_ticks (schedule_name, tick_at, outcome, job_id, reason)
  VALUES ($1, $2, $3, $4, $5) RETURNING ${TICK_COLUMNS}`;
const ADVANCE = `UPDATE soniq_recurring_jobs SET
    next_run_at = CASE WHEN $2::timestamptz IS NOT NULL AND (next_run_at IS NULL OR $2 > next_run_at)
      THEN $2 ELSE next_run_at END,
    last_run_at = CASE WHEN $3::uuid IS NOT NULL THEN $4 ELSE last_run_at END,
    last_job_id = COALESCE($3, last_job_id),
    run_count = run_count + CASE WHEN $3::uuid IS NOT NULL THEN 1 ELSE 0 END,
    updated_at = now()
  WHERE id = $1`;
const HISTORY = `SELECT ${TICK_COLUMNS} FROM soniq_schedule_ticks WHERE schedule_name = $1
  ORDER BY tick_at DESC LIMIT $2`;

function upsertPayload(declarations: readonly ScheduleDeclaration[]): string {
  return JSON.stringify(
    declarations.map((d) => {
      const timing = toStoredTiming(d);
      return {
        id: d.name,
        job_name: d.jobName,
        schedule_type: timing.scheduleType,
        schedule_value: timing.scheduleValue,
        timezone: d.timezone,
        args: d.args,
        catch_up: d.catchUp,
        queue: d.queue,
        priority: d.priority,
        max_attempts: d.maxAttempts,
        status: recurringStatus(false),
        next_run_at: d.nextRunAt?.toISOString() ?? null,
      };
    }),
  );
}

/**
 * Runs `cte` (ending in a `changed` CTE returning the rows it changed) and, with `audit`, writes the audit
 * row in the same statement only when a row changed. True when one did.
 */
async function changed(
  ctx: PgContext,
  operation: string,
  cte: string,
  values: unknown[],
  audit: AuditRecord | undefined,
): Promise<boolean> {
  const text = audit
    ? `${cte},\n  ${auditCte("changed", values.length + 1)}\nSELECT id FROM changed`
    : `${cte}\nSELECT id FROM changed`;
  const res = await query(ctx, operation, {
    text,
    values: audit ? [...values, ...auditValues(audit)] : values,
  });
  return res.rows.length > 0;
}

async function recordTick(
  ctx: PgContext,
  client: pg.PoolClient,
  tick: TickRecord,
): Promise<TickRecordResult> {
  const name = tick.scheduleName;
  const locked = await client.query<{ status: string }>(LOCK, [name]);
  const schedule = locked.rows[0];
  if (schedule === undefined) return { status: "no_schedule" };
  const existing = (await client.query<TickRow>(FIND_TICK, [name, tick.tickAt])).rows[0];
  if (existing !== undefined) return { status: "duplicate", tick: toTick(existing) };
  const planned = resolveTick(tick, schedule.status === "paused");
  let outcome: string = planned.outcome;
  let jobId: string | null = null;
  if (planned.job !== null) {
    const [result] = await enqueueMany(ctx, [planned.job], { tx: client });
    jobId = result?.id ?? null;
    if (result?.deduplicated) outcome = "deduplicated";
  }
  const reason = planned.reason;
  const row = (await client.query<TickRow>(INSERT_TICK, [name, tick.tickAt, outcome, jobId, reason])).rows[0];
  await client.query(ADVANCE, [name, tick.nextRunAt, jobId, tick.tickAt]);
  return { status: "recorded", tick: toTick(row as TickRow) };
}
