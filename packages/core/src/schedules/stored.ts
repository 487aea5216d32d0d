/**
 * How the SQL backends store a schedule's timing in soniq_recurring_jobs (`schedule_type`,
 * `schedule_value`) and its pause (`status`): one encoding, shared, so every backend reads every other's rows.
 */

import type { Schedule } from "../common/types.js";
import type { AuditRecord, NewJob, TickRecord, TickRecordResult } from "../contract/index.js";
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

/**
 * What a backend writes for a tick, decided inside its transaction once it knows whether the schedule is
 * paused now: a `fired` tick of a paused schedule (not a manual trigger) is recorded `skipped` with
 * reason `paused` and makes no job. `job` is what to enqueue (null: nothing); when that enqueue
 * deduplicates, the backend records `deduplicated` instead of `fired`.
 */
export function resolveTick(
  tick: TickRecord,
  paused: boolean,
): { outcome: TickRecord["outcome"]; reason: string | null; job: NewJob | null } {
  if (tick.outcome !== "fired") return { outcome: tick.outcome, reason: tick.reason, job: null };
  if (paused && !tick.manual) return { outcome: "skipped", reason: "paused", job: null };
  return { outcome: "fired", reason: tick.reason, job: tick.job };
}

/** The job a manual trigger answers with: the returned tick's job (recorded or duplicate), else null. */
export function triggeredJobId(result: TickRecordResult): string | null {
  return result.status === "no_schedule" ? null : result.tick.jobId;
}

/**
 * The audit row a backend writes in `recordTick`'s transaction for a manual trigger: `audit` with the job's
 * id in its details, or null (nothing to write) when the trigger made no job, or there was no record.
 */
export function triggerAudit(audit: AuditRecord | undefined, result: TickRecordResult): AuditRecord | null {
  const jobId = triggeredJobId(result);
  if (audit === undefined || jobId === null) return null;
  return { ...audit, details: { ...audit.details, jobId } };
}
