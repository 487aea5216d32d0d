/** The overview's sums: counts core estimated stay marked as estimates through the totals and on the page. */
import type { QueueStats } from "@soniq/core";
import { describe, expect, it } from "vitest";
import { type QueueRow, totalsOf } from "../src/data/overview.js";
import { statCards } from "../src/pages/overview.js";

const row = (name: string, stats: QueueStats, estimated: QueueRow["estimated"]): QueueRow => ({
  name,
  paused: false,
  concurrency: null,
  groupConcurrency: null,
  rateLimit: null,
  lagAlertMs: null,
  stats,
  estimated,
  lagMs: null,
});

describe("overview totals", () => {
  it("overview/estimated-counts: sums per queue; an estimate anywhere marks the key and total; about on the page", () => {
    const big = {
      total: 1_250_004,
      queued: 3,
      processing: 1,
      done: 1_000_000,
      dead_letter: 250_000,
      cancelled: 0,
    };
    const small = { total: 3, queued: 1, processing: 2, done: 0, dead_letter: 0, cancelled: 0 };
    const summary = totalsOf([
      row("default", big, ["done", "dead_letter", "total"]),
      row("reports", small, []),
    ]);
    expect(summary.stats).toEqual({
      total: 1_250_007,
      queued: 4,
      processing: 3,
      done: 1_000_000,
      dead_letter: 250_000,
      cancelled: 0,
    });
    expect([...summary.estimated].sort()).toEqual(["dead_letter", "done", "total"]);
    const page = statCards(summary, "").value;
    expect(page).toContain("about 1.0M");
    expect(page).toContain("about 250k");
    expect(page).toContain('data-stat="queued"><div class="label">queued</div><div class="value">4<');
    expect(page).toContain('data-testid="estimate-note"');
    expect(statCards(totalsOf([row("reports", small, [])]), "").value).not.toContain("estimate-note");
  });
});
