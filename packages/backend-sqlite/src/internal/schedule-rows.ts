/** soniq_recurring_jobs and soniq_schedule_ticks rows as better-sqlite3 returns them, and their mapping. */
import {
  type CatchUpPolicy,
  fromStoredTiming,
  type Schedule,
  type ScheduleDeclaration,
  type ScheduleTick,
  type TickOutcome,
  toStoredTiming,
} from "@soniq/core/backend";

export interface ScheduleRecord {
  id: string;
  job_name: string;
  schedule_type: string;
  schedule_value: string;
  timezone: string | null;
  args: string;
  catch_up: string;
  queue: string | null;
  priority: number | null;
  max_attempts: number | null;
  status: string;
  next_run_at: number | null;
  last_run_at: number | null;
  last_job_id: string | null;
  created_at: number;
}

export interface TickRow {
  tick_at: number;
  outcome: string;
  job_id: string | null;
  reason: string | null;
  recorded_at: number;
}

const dateOrNull = (ms: number | null): Date | null => (ms === null ? null : new Date(ms));

/** The named parameters of the upsert for one declaration. */
export function declarationParams(d: ScheduleDeclaration): Record<string, unknown> {
  const timing = toStoredTiming(d);
  return {
    name: d.name,
    jobName: d.jobName,
    type: timing.scheduleType,
    value: timing.scheduleValue,
    timezone: d.timezone,
    args: JSON.stringify(d.args) ?? "null",
    catchUp: JSON.stringify(d.catchUp),
    queue: d.queue,
    priority: d.priority,
    maxAttempts: d.maxAttempts,
    nextRunAt: d.nextRunAt?.getTime() ?? null,
  };
}

export function toSchedule(r: ScheduleRecord): Schedule {
  return {
    name: r.id,
    jobName: r.job_name,
    ...fromStoredTiming(r.schedule_type, r.schedule_value),
    timezone: r.timezone,
    args: JSON.parse(r.args) as unknown,
    queue: r.queue,
    priority: r.priority,
    maxAttempts: r.max_attempts,
    catchUp: JSON.parse(r.catch_up) as CatchUpPolicy,
    paused: r.status === "paused",
    nextRunAt: dateOrNull(r.next_run_at),
    lastRunAt: dateOrNull(r.last_run_at),
    lastJobId: r.last_job_id,
    createdAt: new Date(r.created_at),
  };
}

export function toTick(r: TickRow): ScheduleTick {
  return {
    tickAt: new Date(r.tick_at),
    outcome: r.outcome as TickOutcome,
    jobId: r.job_id,
    reason: r.reason,
    recordedAt: new Date(r.recorded_at),
  };
}
