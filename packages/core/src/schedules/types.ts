/**
 * Recurring jobs, the words: a *schedule* says when a job recurs (a cron expression in a timezone, or a
 * fixed interval); each expected fire time is a *tick*; the *ledger* (`soniq_schedule_ticks`) holds one
 * row per (schedule, tick) saying what became of it. The scheduler's leader walks every schedule's ticks
 * from its `nextRunAt` and records each one, the job enqueue and the ledger row committing together.
 */

/** What became of a tick, as the ledger records it. */
export const TICK_OUTCOMES = [
  /** A job was enqueued for the tick (`jobId`). */
  "fired",
  /** The schedule was paused at the tick (`reason: "paused"`), or its job could not be built. */
  "skipped",
  /**
   * Nobody ticked in time (no scheduler was running, or the leader was down) and the catch-up policy
   * did not fire it: `reason` is `catch_up_none`, `superseded` (a later tick fired under `"latest"`) or
   * `outside_window` (older than `{ withinMs }`). Written when a scheduler next runs.
   */
  "missed",
  /** The enqueue returned an existing queued job (the job is `unique`, or a dedup key matched): `jobId` is that job. */
  "deduplicated",
] as const;
export type TickOutcome = (typeof TICK_OUTCOMES)[number];

/**
 * What a scheduler does with ticks that passed while nobody was ticking:
 * `"none"` records them missed, `"latest"` (default) fires the most recent one once, `{ withinMs }` fires
 * every missed tick at most that old, oldest first.
 */
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
