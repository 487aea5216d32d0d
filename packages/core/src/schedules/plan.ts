/**
 * What a check does with one schedule, as a pure function: the ticks due since its `nextRunAt`, each
 * with its outcome. The scheduler records them in this order (oldest first).
 *
 * A tick is *on time* when it is at most `lateAfterMs` old at the check (the scheduler passes five
 * check intervals: the longest a leader change takes), and fires. An older tick was missed (nobody was
 * ticking); the schedule's catch-up policy decides: `"none"` records it `missed`, `"latest"` fires the
 * most recent due tick once and records the older ones `missed` (`superseded`), `{ withinMs }` fires
 * the ones at most `withinMs` old. A paused schedule records every due tick `skipped` (`paused`).
 */

import type { CatchUpPolicy, Schedule } from "../common/types.js";
import { nextTickAfter, type Timing, ticksBetween } from "./ticks.js";

export interface PlannedTick {
  tickAt: Date;
  outcome: "fired" | "skipped" | "missed";
  reason: string | null;
  /** The tick after this one (the schedule's next fire once this one is recorded). */
  nextRunAt: Date | null;
}

export interface PlanOptions {
  lateAfterMs: number;
  /** Most ticks to plan in one check; the rest wait for the next check. */
  limit: number;
}

type TimingFields = Pick<Schedule, "cron" | "every" | "timezone">;

/** The timing of a schedule; an interval is anchored at `anchor` (the schedule's next fire). */
export function timingOf(schedule: TimingFields, anchor: Date): Timing {
  if (schedule.cron !== null)
    return { kind: "cron", cron: schedule.cron, timezone: schedule.timezone ?? "UTC" };
  return { kind: "every", everyMs: schedule.every ?? 0, anchor };
}

/** A new schedule's first tick: the next cron time after `now`, or one interval after `now`. */
export function firstTick(schedule: TimingFields, now: Date): Date | null {
  if (schedule.cron !== null) return nextTickAfter(timingOf(schedule, now), now);
  return new Date(now.getTime() + (schedule.every ?? 0));
}

export function planTicks(schedule: Schedule, now: Date, options: PlanOptions): PlannedTick[] {
  const from = schedule.nextRunAt;
  if (from === null || from.getTime() > now.getTime()) return [];
  const timing = timingOf(schedule, from);
  const ticks = ticksBetween(timing, from, now, options.limit);
  const last = ticks.at(-1);
  if (last === undefined) return [];
  const after = nextTickAfter(timing, last);
  // The newest due tick is in this batch unless the limit cut the walk short.
  const newestDue = after === null || after.getTime() > now.getTime() ? last : null;
  return ticks.map((tickAt, i) => {
    const nextRunAt = ticks[i + 1] ?? after;
    if (schedule.paused) return { tickAt, outcome: "skipped", reason: "paused", nextRunAt };
    const age = now.getTime() - tickAt.getTime();
    if (age <= options.lateAfterMs) return { tickAt, outcome: "fired", reason: null, nextRunAt };
    const missed = whyNotCaughtUp(schedule.catchUp, age, tickAt === newestDue);
    return missed === null
      ? { tickAt, outcome: "fired", reason: "catch_up", nextRunAt }
      : { tickAt, outcome: "missed", reason: missed, nextRunAt };
  });
}

/** Null when the policy fires the late tick, else the ledger's reason for not firing it. */
function whyNotCaughtUp(policy: CatchUpPolicy, ageMs: number, newest: boolean): string | null {
  if (policy === "none") return "catch_up_none";
  if (policy === "latest") return newest ? null : "superseded";
  return ageMs <= policy.withinMs ? null : "outside_window";
}
