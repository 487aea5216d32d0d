/**
 * The `schedules` facet: persisted recurring jobs and their tick ledger. The words (what a tick is, the
 * ledger's outcomes) are in `src/types.ts` and the rules (catch-up, leadership) in `src/schedules/`; a backend
 * stores and records atomically.
 */

import type { Schedule, ScheduleTick } from "../common/types.js";
import type { TickOutcome } from "../schema/constants.js";
import type { AuditRecord } from "./audit.js";
import type { NewJob } from "./jobs.js";
import type { NewWebhookDelivery } from "./webhooks.js";

/** A schedule as code declares it (see `Schedule` for the fields). Core validates it and computes its first tick. */
export interface ScheduleDeclaration
  extends Pick<
    Schedule,
    | "name"
    | "jobName"
    | "cron"
    | "every"
    | "timezone"
    | "args"
    | "queue"
    | "priority"
    | "maxAttempts"
    | "catchUp"
  > {
  /**
   * The first tick, used when the schedule is new or its timing (`cron`, `every`, `timezone`) changed.
   * An existing schedule with the same timing keeps its `nextRunAt`, `paused`, `lastRunAt` and `lastJobId`.
   */
  nextRunAt: Date | null;
}

/** One tick to record. The ledger row, the job and the schedule's advance commit together or not at all. */
export interface TickRecord {
  scheduleName: string;
  tickAt: Date;
  /** `fired` enqueues `job`; `deduplicated` is never sent (the backend reports it when the enqueue deduplicated). */
  outcome: Exclude<TickOutcome, "deduplicated">;
  reason: string | null;
  /** Required when `outcome` is `fired`. */
  job: NewJob | null;
  /**
   * The schedule's next tick after this one: `next_run_at` moves to it (never backwards). Null leaves
   * `next_run_at` alone (a manual trigger).
   */
  nextRunAt: Date | null;
  /**
   * A manual trigger: fires even while the schedule is paused. Otherwise a `fired` tick of a schedule
   * that is paused when the transaction runs is recorded `skipped` with reason `paused`, and no job is made.
   */
  manual: boolean;
  /**
   * Webhook deliveries of the tick's event (`schedule.missed` for a `missed` tick), written in the same
   * transaction, only when this call records the row (not for a duplicate).
   */
  deliveries?: readonly NewWebhookDelivery[];
}

export type TickRecordResult =
  /** This call wrote the ledger row (and the job, for fired/deduplicated). */
  | { status: "recorded"; tick: ScheduleTick }
  /** The row already existed (another scheduler recorded the tick): nothing changed; `tick` is that row. */
  | { status: "duplicate"; tick: ScheduleTick }
  /** No schedule has that name (removed meanwhile): nothing was written. */
  | { status: "no_schedule" };

export interface SchedulesFacet {
  /** Insert new schedules, update changed ones (see `ScheduleDeclaration.nextRunAt`); one transaction. */
  upsert(declarations: readonly ScheduleDeclaration[]): Promise<void>;
  /** Every schedule, by name. */
  list(): Promise<Schedule[]>;
  get(name: string): Promise<Schedule | null>;
  /**
   * False when there is no such schedule. With `audit`, the audit row is written in the same transaction,
   * only when there was one.
   */
  setPaused(name: string, paused: boolean, audit?: AuditRecord): Promise<boolean>;
  /** Delete the schedule and its ledger. False when there was none. `audit` as for `setPaused`. */
  remove(name: string, audit?: AuditRecord): Promise<boolean>;
  /**
   * In one transaction: insert the ledger row (unique per (schedule, tick)); for a fired tick, enqueue the
   * job (a deduplicated enqueue records `deduplicated` with the existing job's id); move `next_run_at`
   * forward to `nextRunAt`; for a fired tick set `last_run_at` = tickAt, `last_job_id`, `run_count` + 1.
   * With `audit` (a manual trigger), the same transaction writes it, the job's id added to its details, when
   * the tick returned (recorded or duplicate) names a job. A backend runs core's program for all of this
   * (`recordTickSync` / `recordTickAsync` over its `TickStore`) and implements only the store.
   */
  recordTick(tick: TickRecord, audit?: AuditRecord): Promise<TickRecordResult>;
  /** The ledger, newest tick first. `limit` is 1..1000. */
  history(name: string, query: { limit: number }): Promise<ScheduleTick[]>;
}
