/**
 * The schedules facet: recurring-job declarations (soniq_recurring_jobs, `id` = the schedule's name) and
 * the tick ledger (soniq_schedule_ticks, primary key (schedule_name, tick_at)).
 *
 * `recordTick` runs core's tick program (`recordTickAsync`) over the store below, in one transaction on one
 * pooled connection: the store's read locks the schedule row (FOR UPDATE), so concurrent recorders of a
 * schedule take turns and the second finds the first one's ledger row; the job is enqueued by the statement
 * of `jobs.enqueue`, inside the transaction (its NOTIFY is delivered on commit); the ledger row and the
 * schedule's new fields are one statement. An operator action's audit row commits with its change: in
 * setPaused's and remove's one statement, in recordTick's transaction for a manual trigger.
 */
import type { AsyncTickStore, AuditRecord, ScheduleDeclaration, SchedulesFacet } from "@soniq/core/backend";
import {
  recordTickAsync,
  recurringStatus,
  SCHEDULE_COLUMNS,
  TICK_COLUMNS,
  toStoredTiming,
} from "@soniq/core/backend";
import type pg from "pg";
import { writeAudit } from "./internal/audit-rows.js";
import { type PgContext, query } from "./internal/context.js";
import { compose, effectCtes, type Fragment } from "./internal/effects.js";
import { enqueue } from "./internal/enqueue.js";
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
      changed(ctx, "schedules.setPaused", setPaused(name, recurringStatus(paused)), audit),
    remove: (name, audit) => changed(ctx, "schedules.remove", removed(name), audit),
    recordTick: (tick, audit) =>
      inTransaction(ctx, "schedules.recordTick", (client) =>
        recordTickAsync(tickStore(ctx, client), tick, audit),
      ),
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
const setPaused =
  (name: string, status: string): Fragment =>
  (bind) =>
    `changed AS (UPDATE soniq_recurring_jobs SET status = ${bind.param(status)}, updated_at = now()
    WHERE id = ${bind.param(name)} RETURNING id)`;
const removed =
  (name: string): Fragment =>
  (bind) => {
    const id = bind.param(name);
    return `ticks AS (DELETE FROM soniq_schedule_ticks WHERE schedule_name = ${id}),
  changed AS (DELETE FROM soniq_recurring_jobs WHERE id = ${id} RETURNING id)`;
  };
// The tick's row is read by a statement of its own, after the lock: a statement that waited for the lock
// still reads from the snapshot it started with, which misses the row the lock's holder just committed.
const LOCK = `SELECT status, next_run_at, last_run_at, last_job_id, run_count FROM soniq_recurring_jobs
  WHERE id = $1 FOR UPDATE`;
const FIND_TICK = `SELECT ${TICK_COLUMNS} FROM soniq_schedule_ticks WHERE schedule_name = $1 AND tick_at = $2`;
// The ledger row and the schedule's new fields (decided by core's program under the lock): one statement.
const RECORD = `WITH advanced AS (UPDATE soniq_recurring_jobs SET next_run_at = $6, last_run_at = $7,
    last_job_id = $8, run_count = $9, updated_at = now()
  WHERE id = $1)
INSERT INTO soniq_schedule_ticks (schedule_name, tick_at, outcome, job_id, reason)
  VALUES ($1, $2, $3, $4, $5) RETURNING ${TICK_COLUMNS}`;
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
 * Runs `main` (a `changed` CTE returning the rows it changed) with the audit row riding on it: one statement,
 * the row written only when a row changed. True when one did.
 */
async function changed(
  ctx: PgContext,
  operation: string,
  main: Fragment,
  audit: AuditRecord | undefined,
): Promise<boolean> {
  const statement = compose([main, ...effectCtes({ audit }, "changed")], () => "SELECT id FROM changed");
  return (await query(ctx, operation, statement)).rows.length > 0;
}

type HeadRow = Pick<ScheduleRecord, "status" | "next_run_at" | "last_run_at" | "last_job_id"> & {
  run_count: number;
};

/** The tick program's store on `client`, inside the transaction `recordTick` opened. */
function tickStore(ctx: PgContext, client: pg.PoolClient): AsyncTickStore {
  return {
    read: async (name, tickAt) => {
      const row = (await client.query<HeadRow>(LOCK, [name])).rows[0];
      if (row === undefined) return null;
      const tick = (await client.query<TickRow>(FIND_TICK, [name, tickAt])).rows[0];
      return {
        schedule: {
          paused: row.status === "paused",
          nextRunAt: row.next_run_at,
          lastRunAt: row.last_run_at,
          lastJobId: row.last_job_id,
          runCount: row.run_count,
        },
        tick: tick === undefined ? null : toTick(tick),
      };
    },
    enqueue: (job) => enqueue(ctx, job, { tx: client }),
    record: async ({ scheduleName, tick, schedule }) => {
      const values = [
        scheduleName,
        tick.tickAt,
        tick.outcome,
        tick.jobId,
        tick.reason,
        schedule.nextRunAt,
        schedule.lastRunAt,
        schedule.lastJobId,
        schedule.runCount,
      ];
      return toTick((await client.query<TickRow>(RECORD, values)).rows[0] as TickRow);
    },
    effects: async ({ audit, deliveries }) => {
      await writeDeliveries(client, deliveries);
      if (audit !== null) await writeAudit(client, audit);
    },
  };
}
