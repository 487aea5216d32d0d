import { describe, expect, it } from "vitest";
import type { Schedule } from "../src/common/types.js";
import { firstTick, planTicks } from "../src/schedules/plan.js";

const H = 3_600_000;
const at = (s: string) => new Date(s);

function hourly(overrides: Partial<Schedule> = {}): Schedule {
  return {
    name: "reports.hourly",
    jobName: "reports.hourly",
    cron: "0 * * * *",
    every: null,
    timezone: "UTC",
    args: {},
    queue: null,
    priority: null,
    maxAttempts: null,
    catchUp: "latest",
    paused: false,
    nextRunAt: at("2026-01-01T01:00:00Z"),
    lastRunAt: null,
    lastJobId: null,
    createdAt: at("2026-01-01T00:00:00Z"),
    ...overrides,
  };
}

const opts = { lateAfterMs: 5000, limit: 100 };
const summary = (s: Schedule, now: string) =>
  planTicks(s, at(now), opts).map((t) => [t.tickAt.toISOString().slice(11, 16), t.outcome, t.reason]);

describe("schedules/plan", () => {
  it("nothing due before nextRunAt; an on-time tick fires and points at the next", () => {
    expect(planTicks(hourly(), at("2026-01-01T00:59:59Z"), opts)).toEqual([]);
    const [tick] = planTicks(hourly(), at("2026-01-01T01:00:01Z"), opts);
    expect(tick).toEqual({
      tickAt: at("2026-01-01T01:00:00Z"),
      outcome: "fired",
      reason: null,
      nextRunAt: at("2026-01-01T02:00:00Z"),
    });
  });

  it("latest (default): after downtime the newest tick fires once, the older ones are missed", () => {
    expect(summary(hourly(), "2026-01-01T04:30:00Z")).toEqual([
      ["01:00", "missed", "superseded"],
      ["02:00", "missed", "superseded"],
      ["03:00", "missed", "superseded"],
      ["04:00", "fired", "catch_up"],
    ]);
  });

  it("none: every late tick is missed", () => {
    expect(summary(hourly({ catchUp: "none" }), "2026-01-01T02:30:00Z")).toEqual([
      ["01:00", "missed", "catch_up_none"],
      ["02:00", "missed", "catch_up_none"],
    ]);
  });

  it("withinMs: the late ticks inside the window fire, oldest first", () => {
    expect(summary(hourly({ catchUp: { withinMs: 2 * H } }), "2026-01-01T04:30:00Z")).toEqual([
      ["01:00", "missed", "outside_window"],
      ["02:00", "missed", "outside_window"],
      ["03:00", "fired", "catch_up"],
      ["04:00", "fired", "catch_up"],
    ]);
  });

  it("paused: every due tick is skipped", () => {
    expect(summary(hourly({ paused: true }), "2026-01-01T02:00:01Z")).toEqual([
      ["01:00", "skipped", "paused"],
      ["02:00", "skipped", "paused"],
    ]);
  });

  it("on-time ticks fire whatever the policy", () => {
    const s = hourly({
      cron: null,
      every: 1000,
      timezone: null,
      catchUp: "none",
      nextRunAt: at("2026-01-01T00:00:01Z"),
    });
    expect(planTicks(s, at("2026-01-01T00:00:03Z"), opts).map((t) => t.outcome)).toEqual([
      "fired",
      "fired",
      "fired",
    ]);
  });

  it("a walk cut by the limit does not pick a 'latest' tick; the next check continues", () => {
    const ticks = planTicks(hourly(), at("2026-01-02T00:30:00Z"), { lateAfterMs: 5000, limit: 3 });
    expect(ticks.map((t) => t.outcome)).toEqual(["missed", "missed", "missed"]);
    expect(ticks.at(-1)?.nextRunAt).toEqual(at("2026-01-01T04:00:00Z"));
  });

  it("first tick: the next cron time, or one interval after now", () => {
    expect(firstTick(hourly(), at("2026-01-01T00:10:00Z"))).toEqual(at("2026-01-01T01:00:00Z"));
    expect(firstTick({ cron: null, every: 900_000, timezone: null }, at("2026-01-01T00:10:00Z"))).toEqual(
      at("2026-01-01T00:25:00Z"),
    );
  });
});
