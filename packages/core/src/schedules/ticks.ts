/**
 * When a schedule fires: pure functions from a timing and instants to tick instants, no I/O, no clock.
 *
 * Cron expressions (5 fields, or 6 with seconds first) are read by croner in an IANA timezone. Around DST
 * changes (croner's rules, which follow Vixie cron):
 * - a fixed local time (no `*` or step in the second, minute and hour fields, e.g. `30 2 * * *` or
 *   `0 9,17 * * *`) that does not exist (spring forward) fires at the first valid instant after the gap;
 *   one that occurs twice (fall back) fires once, at its first occurrence;
 * - a pattern with a wildcard or step in those fields (every 15 minutes, `0 * * * *`) keeps its cadence in
 *   real time: times inside the gap do not exist and are not fired; the repeated hour's times are
 *   distinct instants and each fires.
 * Intervals are the instants `anchor + k * every` (k >= 0), whatever the timezone: the anchor is one of
 * the schedule's ticks (its stored next fire), so a restart never moves them.
 */
import { Cron } from "croner";

export type Timing =
  | { readonly kind: "cron"; readonly cron: string; readonly timezone: string }
  | { readonly kind: "every"; readonly everyMs: number; readonly anchor: Date };

/** Parse a cron expression the way the scheduler reads it. Throws croner's error for a bad one. */
export function cronOf(cron: string, timezone: string): Cron {
  return new Cron(cron, { timezone, paused: true, mode: "5-or-6-parts", fixedTimeRule: "no-wildcard" });
}

/** The first tick strictly after `after`. Null when a cron expression never fires again. */
export function nextTickAfter(timing: Timing, after: Date): Date | null {
  if (timing.kind === "cron") return cronOf(timing.cron, timing.timezone).nextRun(after);
  const start = timing.anchor.getTime();
  if (after.getTime() < start) return new Date(start);
  const k = Math.floor((after.getTime() - start) / timing.everyMs) + 1;
  return new Date(start + k * timing.everyMs);
}

/** Every tick t with `from` <= t <= `to`, oldest first, at most `limit` of them. */
export function ticksBetween(timing: Timing, from: Date, to: Date, limit: number): Date[] {
  const ticks: Date[] = [];
  if (to.getTime() < from.getTime() || limit <= 0) return ticks;
  if (timing.kind === "every") {
    const start = timing.anchor.getTime();
    const k0 = from.getTime() <= start ? 0 : Math.ceil((from.getTime() - start) / timing.everyMs);
    for (
      let t = start + k0 * timing.everyMs;
      t <= to.getTime() && ticks.length < limit;
      t += timing.everyMs
    ) {
      ticks.push(new Date(t));
    }
    return ticks;
  }
  const cron = cronOf(timing.cron, timing.timezone);
  // nextRun is strictly after its argument; start 1 ms early so a tick at `from` counts.
  let t = cron.nextRun(new Date(from.getTime() - 1));
  while (t !== null && t.getTime() <= to.getTime() && ticks.length < limit) {
    ticks.push(t);
    t = cron.nextRun(t);
  }
  return ticks;
}

/** The next `count` ticks strictly after `after`. */
export function upcomingTicks(timing: Timing, after: Date, count: number): Date[] {
  const ticks: Date[] = [];
  let t = nextTickAfter(timing, after);
  while (t !== null && ticks.length < count) {
    ticks.push(t);
    t = nextTickAfter(timing, t);
  }
  return ticks;
}
