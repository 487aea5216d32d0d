/**
 * Recurring jobs, the words: a *schedule* says when a job recurs (a cron expression in a timezone, or a
 * fixed interval); each expected fire time is a *tick*; the *ledger* (`soniq_schedule_ticks`) holds one
 * row per (schedule, tick) saying what became of it. The scheduler's leader walks every schedule's ticks
 * from its `nextRunAt` and records each one, the job enqueue and the ledger row committing together.
 */

/**
 * What became of a tick, as the ledger records it (`TICK_OUTCOMES`):
 * - `fired`: a job was enqueued for the tick (`jobId`); reason null on time, `catch_up` when a catch-up
 *   policy fired it late, `trigger` for `schedules.trigger()`;
 * - `skipped`: the schedule was paused at the tick (reason `paused`);
 * - `missed`: nobody ticked in time (no scheduler was running, or the leader was down) and the catch-up
 *   policy did not fire it: reason `catch_up_none`, `superseded` (a later tick fired under `"latest"`) or
 *   `outside_window` (older than `{ withinMs }`). Written when a scheduler next runs;
 * - `deduplicated`: the enqueue returned an existing queued job (the job is `unique`): `jobId` is that job.
 */
export { TICK_OUTCOMES, type TickOutcome } from "../schema/constants.js";

/**
 * What a scheduler does with ticks that passed while nobody was ticking:
 * `"none"` records them missed, `"latest"` (default) fires the most recent one once, `{ withinMs }` fires
 * every missed tick at most that old, oldest first.
 */
import type { TickOutcome } from "../schema/constants.js";

export type CatchUpPolicy = "none" | "latest" | { readonly withinMs: number };

/** A persisted schedule (`soniq_recurring_jobs`). Exactly one of `cron` and `every` is set. */
export interface Schedule {
  name: string;
  jobName: string;
  cron: string | null;
  /** The interval in milliseconds. */
  every: number | null;
  /** IANA timezone the cron expression is read in (`"UTC"` unless declared); null for intervals. */
  timezone: string | null;
  args: unknown;
  /** Null: the job's own queue (or the default) at fire time. */
  queue: string | null;
  priority: number | null;
  maxAttempts: number | null;
  catchUp: CatchUpPolicy;
  paused: boolean;
  /** The next tick not yet recorded. Null when a cron expression has no future fire time. */
  nextRunAt: Date | null;
  /** The tick of the last fired job. */
  lastRunAt: Date | null;
  lastJobId: string | null;
  createdAt: Date;
}

/** One ledger row. */
export interface ScheduleTick {
  tickAt: Date;
  outcome: TickOutcome;
  jobId: string | null;
  reason: string | null;
  recordedAt: Date;
}
