/** How a schedule's timing reads in tables, and the documented key set of a schedule in --json output. */

import type { Schedule } from "@soniq/core";
import { newJobId } from "@soniq/core/backend";
import { describe, expect, it } from "vitest";
import { SCHEDULE_KEYS, scheduleRow } from "../src/commands/schedules.js";
import { interval, shortId } from "../src/output.js";
import { progressText, when } from "../src/views.js";

describe("schedule views", () => {
  it("views/interval: milliseconds in core's duration words", () => {
    expect([1000, 1500, 90_000, 5_400_000, 86_400_000, 0].map(interval)).toEqual([
      "1s",
      "1s500ms",
      "1m30s",
      "1h30m",
      "1d",
      "0ms",
    ]);
  });

  it("views/short-ids-differ: ids of jobs made together show different short ids (their tails), '-' for none", () => {
    const ids = [newJobId(), newJobId(), newJobId()];
    const shown = ids.map(shortId);
    expect(new Set(shown).size).toBe(3);
    expect(shown.every((s, i) => ids[i]?.endsWith(s))).toBe(true);
    expect(shortId(null)).toBe("-");
  });

  it("views/when: every <interval>, or the cron with its timezone when not UTC", () => {
    expect(when({ cron: null, every: 30_000, timezone: null })).toBe("every 30s");
    expect(when({ cron: "0 7 * * *", every: null, timezone: "UTC" })).toBe("0 7 * * *");
    expect(when({ cron: "0 7 * * *", every: null, timezone: "Europe/Paris" })).toBe(
      "0 7 * * * (Europe/Paris)",
    );
  });

  it("views/schedule-row: exactly the documented keys, in order, a missing one null", () => {
    const row = scheduleRow({ name: "a", jobName: "a", extra: 1 } as unknown as Schedule);
    expect(Object.keys(row)).toEqual([...SCHEDULE_KEYS]);
    expect(row).toMatchObject({ name: "a", cron: null, createdAt: null });
  });
  it("views/progress: a bar for values that say how far, JSON for the rest, '-' for none", () => {
    expect(progressText(null)).toBe("-");
    expect(progressText(50)).toBe("[##########..........] 50%");
    expect(progressText(12.345)).toBe("[##..................] 12.3%");
    expect(progressText({ current: 3, total: 4, phase: "upload" })).toBe(
      '[###############.....] 75%  {"current":3,"total":4,"phase":"upload"}',
    );
    expect(progressText({ phase: "upload" })).toBe('{"phase":"upload"}');
  });
});
