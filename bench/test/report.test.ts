import { describe, expect, test } from "vitest";
import type { Sample } from "../src/plan.js";
import { computeRatios, invalidRows, median, renderTable, summarise } from "../src/report.js";
import type { SystemAdapter } from "../src/systems/types.js";
import { percentile } from "../src/workloads.js";

function sample(system: string, run: number, metrics: Record<string, number>, valid = true): Sample {
  return {
    system,
    workload: "w1-c10",
    run,
    valid,
    reason: valid ? null : "2 jobs never started",
    metrics,
    seconds: 1,
  };
}

const adapter = (id: string): SystemAdapter => ({
  id,
  label: id,
  storage: "postgres",
  inProcess: false,
  notes: "",
  prepare: async () => {},
  open: async () => {
    throw new Error("not used");
  },
});

describe("report", () => {
  test("report/median-of-runs", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNull();
  });

  test("report/percentile-nearest-rank", () => {
    const sorted = Array.from({ length: 300 }, (_, i) => i + 1);
    expect(percentile(sorted, 0.5)).toBe(150);
    expect(percentile(sorted, 0.99)).toBe(297);
    expect(percentile([7], 0.99)).toBe(7);
  });

  test("report/invalid-run-is-never-timed", () => {
    const samples = [
      sample("soniq-postgres", 1, { drain_c10: 100, bulk_enqueue: 10 }),
      sample("soniq-postgres", 2, {}, false),
      sample("soniq-postgres", 3, { drain_c10: 300, bulk_enqueue: 30 }),
      sample("graphile-fast", 1, { drain_c10: 50, bulk_enqueue: 10 }),
    ];
    const summary = summarise(samples);
    expect(summary["soniq-postgres"]?.drain_c10).toBe(200);
    expect([...invalidRows(samples).keys()]).toEqual(["soniq-postgres"]);
    const table = renderTable([adapter("soniq-postgres"), adapter("graphile-fast")], samples, summary);
    const soniqRow = table.split("\n").find((l) => l.startsWith("| soniq-postgres"));
    expect(soniqRow).toContain("**INVALID**");
    expect(soniqRow?.split("|")[2]?.trim()).toBe("INVALID");
  });

  test("report/ratios-above-one-mean-soniq-better", () => {
    const summary = {
      "soniq-postgres": { drain_c10: 200, latency_p99: 5 },
      "graphile-fast": { drain_c10: 100, latency_p99: 10 },
    };
    const ratios = computeRatios(summary, ["soniq-postgres"]);
    expect(ratios.find((r) => r.metric === "drain_c10")?.value).toBe(2);
    expect(ratios.find((r) => r.metric === "latency_p99")?.value).toBe(2);
  });
});
