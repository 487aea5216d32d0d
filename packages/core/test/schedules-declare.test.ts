import { describe, expect, it } from "vitest";
import { isSoniqError } from "../src/common/errors.js";
import { declareSchedule, parseEvery, type ScheduleSpec } from "../src/schedules/declare.js";

function fieldOf(options: unknown): unknown {
  try {
    declareSchedule("reports.nightly", options as ScheduleSpec);
  } catch (err) {
    expect(isSoniqError(err, "SONIQ_INVALID_OPTIONS")).toBe(true);
    return (err as { context: { field: unknown } }).context.field;
  }
  throw new Error("expected SONIQ_INVALID_OPTIONS");
}

describe("schedules/declare", () => {
  it("fills defaults: name = job name, timezone UTC, args {}, catchUp latest", () => {
    expect(declareSchedule("reports.nightly", { cron: "0 2 * * *" })).toEqual({
      name: "reports.nightly",
      jobName: "reports.nightly",
      cron: "0 2 * * *",
      every: null,
      timezone: "UTC",
      args: {},
      queue: null,
      priority: null,
      catchUp: "latest",
    });
  });

  it("reads intervals as ms or durations", () => {
    expect(parseEvery(15_000)).toBe(15_000);
    expect(parseEvery("30s")).toBe(30_000);
    expect(parseEvery("15m")).toBe(900_000);
    expect(parseEvery("1h")).toBe(3_600_000);
    expect(parseEvery("1h30m")).toBe(5_400_000);
    expect(parseEvery("1d")).toBe(86_400_000);
    expect(declareSchedule("cleanup.run", { every: "15m" }).every).toBe(900_000);
  });

  it("names the bad field", () => {
    expect(fieldOf({ cron: "not a cron" })).toBe("cron");
    expect(fieldOf({ cron: "* * * * * * *" })).toBe("cron"); // 7 fields
    expect(fieldOf({ cron: "0 0 30 2 *" })).toBe("cron"); // 30 February never comes
    expect(fieldOf({ cron: "0 9 * * *", timezone: "Mars/Olympus_Mons" })).toBe("timezone");
    expect(fieldOf({ every: "15 minutes" })).toBe("every");
    expect(fieldOf({ every: 0 })).toBe("every");
    expect(fieldOf({ every: 500 })).toBe("every");
    expect(fieldOf({ every: 1.5e3 + 0.5 })).toBe("every");
    expect(fieldOf({ every: "1h", timezone: "Europe/Berlin" })).toBe("timezone");
    expect(fieldOf({ cron: "0 9 * * *", every: "1h" })).toBe("cron");
    expect(fieldOf({})).toBe("cron");
    expect(fieldOf({ every: "1h", catchUp: "all" })).toBe("catchUp");
    expect(fieldOf({ every: "1h", catchUp: { withinMs: -1 } })).toBe("catchUp");
    expect(fieldOf({ every: "1h", name: "Bad Name" })).toBe("name");
    expect(fieldOf({ every: "1h", queue: "Bad Queue" })).toBe("queue");
    expect(fieldOf({ every: "1h", priority: 1.5 })).toBe("priority");
    expect(fieldOf({ every: "1h", args: { when: new Date() } })).toBe("args");
    expect(fieldOf({ every: "1h", evry: "1h" })).toBe("evry");
  });

  it("reports every problem in one error", () => {
    try {
      declareSchedule("reports.nightly", { cron: "nope", catchUp: "all" as never, priority: 0.5 });
      expect.unreachable();
    } catch (err) {
      expect((err as { context: { fields: string[] } }).context.fields).toEqual([
        "cron",
        "priority",
        "catchUp",
      ]);
    }
  });
});
