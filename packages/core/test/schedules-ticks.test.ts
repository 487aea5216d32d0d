import { describe, expect, it } from "vitest";
import { nextTickAfter, type Timing, ticksBetween, upcomingTicks } from "../src/schedules/ticks.js";

const iso = (dates: Date[]) => dates.map((d) => d.toISOString());
const cron = (expr: string, timezone = "UTC"): Timing => ({ kind: "cron", cron: expr, timezone });
const at = (s: string) => new Date(s);

describe("schedules/ticks: cron", () => {
  it("5 fields read in the timezone: 09:00 on weekdays in Berlin is 08:00Z in winter", () => {
    const ticks = upcomingTicks(cron("0 9 * * 1-5", "Europe/Berlin"), at("2026-01-09T12:00:00Z"), 3);
    expect(iso(ticks)).toEqual([
      "2026-01-12T08:00:00.000Z",
      "2026-01-13T08:00:00.000Z",
      "2026-01-14T08:00:00.000Z",
    ]);
  });

  it("6 fields: the first is seconds", () => {
    const ticks = upcomingTicks(cron("*/20 * * * * *"), at("2026-01-01T00:00:00Z"), 3);
    expect(iso(ticks)).toEqual([
      "2026-01-01T00:00:20.000Z",
      "2026-01-01T00:00:40.000Z",
      "2026-01-01T00:01:00.000Z",
    ]);
  });

  it("ticksBetween includes both ends and stops at the limit", () => {
    const hourly = cron("0 * * * *");
    expect(iso(ticksBetween(hourly, at("2026-01-01T01:00:00Z"), at("2026-01-01T03:00:00Z"), 10))).toEqual([
      "2026-01-01T01:00:00.000Z",
      "2026-01-01T02:00:00.000Z",
      "2026-01-01T03:00:00.000Z",
    ]);
    expect(ticksBetween(hourly, at("2026-01-01T01:00:00Z"), at("2026-01-02T01:00:00Z"), 5)).toHaveLength(5);
    expect(ticksBetween(hourly, at("2026-01-01T03:00:00Z"), at("2026-01-01T01:00:00Z"), 5)).toEqual([]);
  });

  it("nextTickAfter is strictly after", () => {
    expect(nextTickAfter(cron("0 * * * *"), at("2026-01-01T01:00:00Z"))?.toISOString()).toBe(
      "2026-01-01T02:00:00.000Z",
    );
  });
});

describe("schedules/ticks: DST", () => {
  it("Berlin spring forward: 02:30 does not exist on 29 March, it fires at 03:00 CEST (01:00Z), once", () => {
    const ticks = ticksBetween(
      cron("30 2 * * *", "Europe/Berlin"),
      at("2026-03-27T00:00:00Z"),
      at("2026-03-31T00:00:00Z"),
      10,
    );
    expect(iso(ticks)).toEqual([
      "2026-03-27T01:30:00.000Z", // 02:30 CET
      "2026-03-28T01:30:00.000Z",
      "2026-03-29T01:00:00.000Z", // the gap: first valid instant after it, 03:00 CEST
      "2026-03-30T00:30:00.000Z", // 02:30 CEST
    ]);
  });

  it("Berlin fall back: 02:30 happens twice on 25 October and fires once, at the first", () => {
    const ticks = ticksBetween(
      cron("30 2 * * *", "Europe/Berlin"),
      at("2026-10-24T00:00:00Z"),
      at("2026-10-27T00:00:00Z"),
      10,
    );
    expect(iso(ticks)).toEqual([
      "2026-10-24T00:30:00.000Z", // 02:30 CEST
      "2026-10-25T00:30:00.000Z", // 02:30 CEST, the first of the two; not 01:30Z (02:30 CET) as well
      "2026-10-26T01:30:00.000Z", // 02:30 CET
    ]);
  });

  it("New York spring forward: 02:30 on 8 March fires at 03:00 EDT (07:00Z)", () => {
    const ticks = ticksBetween(
      cron("30 2 * * *", "America/New_York"),
      at("2026-03-07T00:00:00Z"),
      at("2026-03-10T00:00:00Z"),
      10,
    );
    expect(iso(ticks)).toEqual([
      "2026-03-07T07:30:00.000Z",
      "2026-03-08T07:00:00.000Z",
      "2026-03-09T06:30:00.000Z",
    ]);
  });

  it("New York fall back: 01:30 on 1 November fires once (EDT), and a list of hours counts as fixed times", () => {
    const once = ticksBetween(
      cron("30 1 * * *", "America/New_York"),
      at("2026-10-31T00:00:00Z"),
      at("2026-11-03T00:00:00Z"),
      10,
    );
    expect(iso(once)).toEqual([
      "2026-10-31T05:30:00.000Z",
      "2026-11-01T05:30:00.000Z",
      "2026-11-02T06:30:00.000Z",
    ]);
    const list = ticksBetween(
      cron("30 1,13 * * *", "America/New_York"),
      at("2026-11-01T00:00:00Z"),
      at("2026-11-02T00:00:00Z"),
      10,
    );
    expect(iso(list)).toEqual(["2026-11-01T05:30:00.000Z", "2026-11-01T18:30:00.000Z"]);
  });

  it("a wildcard pattern keeps its real-time cadence through the repeated hour", () => {
    const ticks = ticksBetween(
      cron("0,30 * * * *", "America/New_York"),
      at("2026-11-01T05:00:00Z"),
      at("2026-11-01T07:00:00Z"),
      10,
    );
    // 01:00 EDT, 01:30 EDT, 01:00 EST, 01:30 EST, 02:00 EST: every half hour of real time.
    expect(iso(ticks)).toEqual([
      "2026-11-01T05:00:00.000Z",
      "2026-11-01T05:30:00.000Z",
      "2026-11-01T06:00:00.000Z",
      "2026-11-01T06:30:00.000Z",
      "2026-11-01T07:00:00.000Z",
    ]);
  });
});

describe("schedules/ticks: intervals", () => {
  const every = (ms: number, anchor: string): Timing => ({ kind: "every", everyMs: ms, anchor: at(anchor) });

  it("ticks are anchor + k * every, never before the anchor", () => {
    const t = every(15 * 60_000, "2026-01-01T00:07:00Z");
    expect(iso(ticksBetween(t, at("2026-01-01T00:00:00Z"), at("2026-01-01T00:40:00Z"), 10))).toEqual([
      "2026-01-01T00:07:00.000Z",
      "2026-01-01T00:22:00.000Z",
      "2026-01-01T00:37:00.000Z",
    ]);
    expect(iso(ticksBetween(t, at("2026-01-01T00:23:00Z"), at("2026-01-01T00:52:00Z"), 10))).toEqual([
      "2026-01-01T00:37:00.000Z",
      "2026-01-01T00:52:00.000Z",
    ]);
  });

  it("nextTickAfter keeps the anchor's phase whatever instant it starts from", () => {
    const t = every(60_000, "2026-01-01T00:00:30Z");
    expect(nextTickAfter(t, at("2026-01-01T00:00:00Z"))?.toISOString()).toBe("2026-01-01T00:00:30.000Z");
    expect(nextTickAfter(t, at("2026-01-01T00:00:30Z"))?.toISOString()).toBe("2026-01-01T00:01:30.000Z");
    expect(nextTickAfter(t, at("2026-01-01T05:00:31Z"))?.toISOString()).toBe("2026-01-01T05:01:30.000Z");
  });

  it("DST does not move an interval: hourly across Berlin's spring forward is every 3600 s", () => {
    const t = every(3_600_000, "2026-03-29T00:00:00Z");
    const ticks = ticksBetween(t, at("2026-03-29T00:00:00Z"), at("2026-03-29T03:00:00Z"), 10);
    const first = ticks[0]?.getTime() ?? Number.NaN;
    expect(ticks.map((d) => d.getTime() - first)).toEqual([0, 3_600_000, 7_200_000, 10_800_000]);
  });
});
