/** soniq_recurring_jobs and soniq_schedule_ticks rows as node-postgres returns them, and their mapping. */
import {
  type CatchUpPolicy,
  fromStoredTiming,
  type Schedule,
  type ScheduleTick,
  type TickOutcome,
} from "@soniq/core/backend";

export interface ScheduleRecord {
  id: string;
  job_name: string;
  schedule_type: string;
  schedule_value: string;
  timezone: string | null;
  args: unknown;
  catch_up: CatchUpPolicy;
  queue: string | null;
  priority: number | null;
  max_attempts: number | null;
  status: string;
  next_run_at: Date | null;
  last_run_at: Date | null;
  last_job_id: string | null;
  created_at: Date;
}

export interface TickRow {
  tick_at: Date;
  outcome: TickOutcome;
  job_id: string | null;
  reason: string | null;
  recorded_at: Date;
}

export function toSchedule(r: ScheduleRecord): Schedule {
  return {
    name: r.id,
    jobName: r.job_name,
    ...fromStoredTiming(r.schedule_type, r.schedule_value),
    timezone: r.timezone,
    args: r.args,
    queue: r.queue,
    priority: r.priority,
    maxAttempts: r.max_attempts,
    catchUp: r.catch_up,
    paused: r.status === "paused",
    nextRunAt: r.next_run_at,
    lastRunAt: r.last_run_at,
    lastJobId: r.last_job_id,
    createdAt: r.created_at,
  };
}

export function toTick(r: TickRow): ScheduleTick {
  return {
    tickAt: r.tick_at,
    outcome: r.outcome,
    jobId: r.job_id,
    reason: r.reason,
    recordedAt: r.recorded_at,
  };
}
