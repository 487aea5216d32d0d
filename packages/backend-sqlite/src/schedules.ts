/**
 * The schedules facet: recurring-job declarations (soniq_recurring_jobs, `id` = the schedule's name) and
 * the tick ledger (soniq_schedule_ticks, primary key (schedule_name, tick_at)). `recordTick` runs core's
 * tick program (`recordTickSync`) over the store below in one IMMEDIATE transaction: the ledger row, the job
 * insert and the schedule's advance commit together, and the write lock taken first means a second recorder
 * of the same tick (another process) finds the row and changes nothing. An operator action's audit row is
 * written in the IMMEDIATE transaction of its change.
 */
import {
  recordTickSync,
  recurringStatus,
  SCHEDULE_COLUMNS,
  type SchedulesFacet,
  TICK_COLUMNS,
  type TickStore,
} from "@soniq/core/backend";
import { writeAudit } from "./internal/audit-rows.js";
import { immediate, runSync, type SqliteContext } from "./internal/context.js";
import { enqueue } from "./internal/enqueue.js";
import {
  declarationParams,
  type ScheduleRecord,
  type TickRow,
  toSchedule,
  toTick,
} from "./internal/schedule-rows.js";
import { NOW } from "./internal/sql.js";
import { writeDeliveries } from "./internal/webhook-rows.js";

export function schedulesFacet(ctx: SqliteContext): SchedulesFacet {
  return {
    upsert: (declarations) =>
      runSync("schedules.upsert", () => {
        immediate(ctx, () => {
          for (const d of declarations) ctx.statement(UPSERT).run(declarationParams(d));
        });
      }),
    list: () =>
      runSync("schedules.list", () => (ctx.statement(LIST).all() as ScheduleRecord[]).map(toSchedule)),
    get: (name) =>
      runSync("schedules.get", () => {
        const row = ctx.statement(GET).get(name) as ScheduleRecord | undefined;
        return row === undefined ? null : toSchedule(row);
      }),
    setPaused: (name, paused, audit) =>
      runSync("schedules.setPaused", () =>
        immediate(ctx, () => {
          const changed =
            ctx.statement(SET_PAUSED).run({ name, status: recurringStatus(paused) }).changes > 0;
          if (changed && audit) writeAudit(ctx, audit);
          return changed;
        }),
      ),
    remove: (name, audit) =>
      runSync("schedules.remove", () =>
        immediate(ctx, () => {
          ctx.statement(DELETE_TICKS).run(name);
          const removed = ctx.statement(DELETE).run(name).changes > 0;
          if (removed && audit) writeAudit(ctx, audit);
          return removed;
        }),
      ),
    recordTick: (tick, audit) =>
      runSync("schedules.recordTick", () =>
        immediate(ctx, () => recordTickSync(tickStore(ctx), tick, audit)),
      ),
    history: (name, { limit }) =>
      runSync("schedules.history", () => (ctx.statement(HISTORY).all(name, limit) as TickRow[]).map(toTick)),
  };
}

// An unchanged timing (type, value, timezone) keeps next_run_at; SET expressions read the old row.
const UPSERT = `INSERT INTO soniq_recurring_jobs (id, job_name, schedule_type, schedule_value, timezone, args,
    catch_up, queue, priority, max_attempts, status, next_run_at, created_at, updated_at)
  VALUES (@name, @jobName, @type, @value, @timezone, @args, @catchUp, @queue, @priority, @maxAttempts, 'active',
    @nextRunAt, ${NOW}, ${NOW})
  ON CONFLICT (id) DO UPDATE SET job_name = excluded.job_name, args = excluded.args, catch_up = excluded.catch_up,
    queue = excluded.queue, priority = excluded.priority, max_attempts = excluded.max_attempts,
    next_run_at = CASE WHEN schedule_type IS excluded.schedule_type AND schedule_value IS excluded.schedule_value
      AND timezone IS excluded.timezone THEN next_run_at ELSE excluded.next_run_at END,
    schedule_type = excluded.schedule_type, schedule_value = excluded.schedule_value,
    timezone = excluded.timezone, updated_at = ${NOW}`;
const LIST = `SELECT ${SCHEDULE_COLUMNS} FROM soniq_recurring_jobs ORDER BY id`;
const GET = `SELECT ${SCHEDULE_COLUMNS} FROM soniq_recurring_jobs WHERE id = ?`;
const SET_PAUSED = `UPDATE soniq_recurring_jobs SET status = @status, updated_at = ${NOW} WHERE id = @name`;
const DELETE_TICKS = "DELETE FROM soniq_schedule_ticks WHERE schedule_name = ?";
const DELETE = "DELETE FROM soniq_recurring_jobs WHERE id = ?";
// The IMMEDIATE transaction holds the write lock: the read needs no lock of its own.
const READ = `SELECT r.status, r.next_run_at, r.last_run_at, r.last_job_id, r.run_count,
    t.tick_at, t.outcome, t.job_id, t.reason, t.recorded_at
  FROM soniq_recurring_jobs r LEFT JOIN soniq_schedule_ticks t ON t.schedule_name = r.id AND t.tick_at = @tickAt
  WHERE r.id = @name`;
const INSERT_TICK = `INSERT INTO soniq_schedule_ticks (schedule_name, tick_at, outcome, job_id, reason, recorded_at)
  VALUES (@name, @tickAt, @outcome, @jobId, @reason, ${NOW}) RETURNING ${TICK_COLUMNS}`;
const ADVANCE = `UPDATE soniq_recurring_jobs SET next_run_at = @nextRunAt, last_run_at = @lastRunAt,
    last_job_id = @lastJobId, run_count = @runCount, updated_at = ${NOW}
  WHERE id = @name`;
const HISTORY = `SELECT ${TICK_COLUMNS} FROM soniq_schedule_ticks WHERE schedule_name = ?
  ORDER BY tick_at DESC LIMIT ?`;

type LedgerRow = Pick<ScheduleRecord, "status" | "next_run_at" | "last_run_at" | "last_job_id"> & {
  run_count: number;
} & { [K in keyof TickRow]: TickRow[K] | null };

const dateOrNull = (ms: number | null): Date | null => (ms === null ? null : new Date(ms));
const msOrNull = (date: Date | null): number | null => date?.getTime() ?? null;

/** The tick program's store on the backend's connection, inside the IMMEDIATE transaction. */
function tickStore(ctx: SqliteContext): TickStore {
  return {
    read: (name, tickAt) => {
      const row = ctx.statement(READ).get({ name, tickAt: tickAt.getTime() }) as LedgerRow | undefined;
      if (row === undefined) return null;
      return {
        schedule: {
          paused: row.status === "paused",
          nextRunAt: dateOrNull(row.next_run_at),
          lastRunAt: dateOrNull(row.last_run_at),
          lastJobId: row.last_job_id,
          runCount: row.run_count,
        },
        tick: row.tick_at === null ? null : toTick(row as TickRow),
      };
    },
    enqueue: (job) => enqueue(ctx, ctx.db, job),
    record: ({ scheduleName: name, tick, schedule }) => {
      const row = ctx.statement(INSERT_TICK).get({ name, ...tick, tickAt: tick.tickAt.getTime() }) as TickRow;
      ctx.statement(ADVANCE).run({
        name,
        nextRunAt: msOrNull(schedule.nextRunAt),
        lastRunAt: msOrNull(schedule.lastRunAt),
        lastJobId: schedule.lastJobId,
        runCount: schedule.runCount,
      });
      return toTick(row);
    },
    effects: ({ audit, deliveries }) => {
      writeDeliveries(ctx, deliveries);
      if (audit !== null) writeAudit(ctx, audit);
    },
  };
}
