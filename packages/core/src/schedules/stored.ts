/**
 * How the SQL backends store a schedule's timing in soniq_recurring_jobs (`schedule_type`,
 * `schedule_value`) and its pause (`status`): one encoding, shared, so every backend reads every other's rows.
 */

import type { Schedule } from "../common/types.js";
import type { RecurringStatus, ScheduleType } from "../schema/constants.js";

/** The soniq_recurring_jobs columns a `Schedule` is read from (the same in both dialects). */
export const SCHEDULE_COLUMNS =
  "id, job_name, schedule_type, schedule_value, timezone, args, catch_up, queue, priority, max_attempts, " +
  "status, next_run_at, last_run_at, last_job_id, created_at";
/** The soniq_schedule_ticks columns a `ScheduleTick` is read from. */
export const TICK_COLUMNS = "tick_at, outcome, job_id, reason, recorded_at";

export interface StoredTiming {
  scheduleType: ScheduleType;
  /** The cron expression, or the interval in milliseconds as decimal text. */
  scheduleValue: string;
}

export function toStoredTiming(schedule: Pick<Schedule, "cron" | "every">): StoredTiming {
  return schedule.cron !== null
    ? { scheduleType: "cron", scheduleValue: schedule.cron }
    : { scheduleType: "interval", scheduleValue: String(schedule.every) };
}

export function fromStoredTiming(
  scheduleType: string,
  scheduleValue: string,
): Pick<Schedule, "cron" | "every"> {
  return scheduleType === "cron"
    ? { cron: scheduleValue, every: null }
    : { cron: null, every: Number(scheduleValue) };
}

export const recurringStatus = (paused: boolean): RecurringStatus => (paused ? "paused" : "active");
