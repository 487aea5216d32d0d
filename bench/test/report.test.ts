import { describe, expect, test } from "vitest";
import { formatMetric } from "../src/columns.js";
import { applies } from "../src/measurements.js";
import { expandWorkloads, OPTIONAL_WORKLOADS, parseOptions } from "../src/options.js";
import type { Sample } from "../src/plan.js";
import {
  computeRatios,
  computeSelfRatios,
  invalidRows,
  median,
  renderSelfRatios,
  renderTable,
  summarise,
} from "../src/report.js";
import { mergeReports } from "../src/start-report.js";
import { findSystem } from "../src/systems/index.js";
import type { SystemAdapter } from "../src/systems/types.js";
import { percentile } from "../src/workloads.js";

function sample(
  system: string,
  run: number,
  metrics: Record<string, number>,
  valid = true,
  workload: Sample["workload"] = "w1-c10",
): Sample {
  return {
    system,
    workload,
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

  test("report/ratios-pair-rows-of-the-same-runtime-and-storage", () => {
    const summary = {
      "soniq-postgres": { drain_c10: 300 },
      "soniq-postgres-node24": { drain_c10: 400 },
      "soniq-sqlite": { drain_c10: 500 },
      "graphile-fast": { drain_c10: 100 },
      "graphile-018-fast": { drain_c10: 200 },
      bullmq: { drain_c10: 150 },
      plainjob: { drain_c10: 250 },
    };
    const ratios = computeRatios(summary, ["soniq-postgres", "soniq-postgres-node24", "soniq-sqlite"]);
    const pairs = ratios.map((r) => `${r.soniq}/${r.peer}=${r.value}`).sort();
    expect(pairs).toEqual([
      "soniq-postgres-node24/graphile-018-fast=2",
      "soniq-postgres/bullmq=2",
      "soniq-postgres/graphile-fast=3",
      "soniq-sqlite/plainjob=2",
    ]);
  });

  test("report/optional-sections-only-when-run", () => {
    const base = [sample("soniq-postgres", 1, { drain_c10: 100, bulk_enqueue: 10 })];
    const plain = renderTable([adapter("soniq-postgres")], base, summarise(base));
    expect(plain.split("\n")[0]).toContain("W1 drain c10");
    expect(plain).not.toContain("W7");
    const withW7 = [
      ...base,
      sample("soniq-postgres", 1, { steady_500_p50: 2, steady_500_p99: 9 }, true, "w7-500"),
    ];
    const table = renderTable([adapter("soniq-postgres")], withW7, summarise(withW7));
    expect(table).toContain("**W7 steady arrival");
    expect(table).toContain("| 2.0 | 9.0 | — |");
  });

  test("report/sweep-section-and-formats", () => {
    const metrics = {
      drain_retained_10m: 900,
      sweep_10m_ms: 1234.56,
      sweep_10m_rows: 1_000_000,
      sweep_10m_us_per_row: 1.23456,
      sweep_10m_db_cpu_ms: 987.65,
    };
    const samples = [sample("soniq-postgres", 1, metrics, true, "w5b")];
    const table = renderTable([adapter("soniq-postgres")], samples, summarise(samples));
    expect(table).toContain("W5b drain, 10M retained (jobs/s)");
    expect(table).toContain("**Retention sweep after W5 / W5b");
    expect(table).toContain("| — | — | — | — | 1234.6 | 1,000,000 | 1.2 | 987.6 |");
    expect(formatMetric("sweep_us_per_row", 12.34)).toBe("12.3");
  });

  test("report/w9-sections-formats-and-ratios", () => {
    const w9 = {
      w9_steps_per_sec: 20_000,
      w9_jobs_per_sec: 2_000,
      w9_store_cpu_us_per_step: 4.25,
      w9_plain_store_cpu_us_per_job: 21.5,
    };
    const w9s = { w9s_ms: 2_500, w9s_ideal_ms: 2_100, w9s_vs_ideal_x: 1.19, w9s_runs_per_job_x: 2 };
    const samples = [
      sample("soniq-postgres", 1, w9, true, "w9"),
      sample("soniq-postgres", 1, w9s, true, "w9s"),
      sample("dbos", 1, { ...w9, w9_steps_per_sec: 5_000, w9_store_cpu_us_per_step: 17 }, true, "w9"),
      sample("dbos", 1, { ...w9s, w9s_ms: 200_000, w9s_vs_ideal_x: 95, w9s_runs_per_job_x: 1 }, true, "w9s"),
    ];
    const summary = summarise(samples);
    const table = renderTable([adapter("soniq-postgres"), adapter("dbos")], samples, summary);
    expect(table).toContain("**W9 durable steps");
    expect(table).toContain("**W9s durable sleep");
    expect(table).toContain("| soniq-postgres | 20,000 | 2,000 | 4.3 | — | 21.5 |");
    expect(table).toContain("| dbos | 200000.0 | 2100.0 | 95.00 | 1.00 |");
    const ratios = computeRatios(summary, ["soniq-postgres"]);
    const of = (metric: string) => ratios.find((r) => r.peer === "dbos" && r.metric === metric)?.value;
    expect(of("w9_steps_per_sec")).toBe(4);
    expect(of("w9_store_cpu_us_per_step")).toBe(4);
    expect(of("w9s_ms")).toBe(80);
    // The ideal and the runs a job are settings of the measurement, not results to compare.
    expect(of("w9s_ideal_ms")).toBeUndefined();
    expect(of("w9s_runs_per_job_x")).toBeUndefined();
  });

  test("report/self-ratios-of-one-metric-against-two-baselines", () => {
    const values = computeSelfRatios({
      "soniq-postgres": {
        w9_store_cpu_us_per_step: 5,
        w9_plain_store_cpu_us_per_job: 20,
        c10_store_cpu_us: 25,
      },
      dbos: { w9_store_cpu_us_per_step: 30, w9_plain_store_cpu_us_per_job: 60 },
    });
    const table = renderSelfRatios([adapter("soniq-postgres"), adapter("dbos")], values);
    expect(table).toContain("| W9 DB CPU a step ÷ a plain job | W9 DB CPU a step ÷ a W1 c10 job |");
    expect(table).toContain("| soniq-postgres | 0.25x | 0.20x |");
    expect(table).toContain("| dbos | 0.50x | — |");
  });

  test("report/self-ratio-against-own-baseline", () => {
    const summary = { "soniq-postgres": { drain_c10: 200, drain_c10_rate: 150, drain_retained: 100 } };
    const values = computeSelfRatios(summary);
    expect(values.find((v) => v.metric === "drain_c10_rate")?.value).toBe(0.75);
    expect(values.find((v) => v.metric === "drain_retained")?.value).toBe(0.5);
    const w5b = computeSelfRatios({ "soniq-postgres": { drain_c10: 200, drain_retained_10m: 50 } });
    expect(w5b).toEqual([
      { system: "soniq-postgres", metric: "drain_retained_10m", baseline: "drain_c10", value: 0.25 },
    ]);
    expect(renderSelfRatios([adapter("soniq-postgres")], w5b)).toContain("| W5b ÷ W1 c10 |");
    const table = renderSelfRatios([adapter("soniq-postgres")], values);
    expect(table).toContain("| soniq-postgres | 0.50x | 0.75x |");
    expect(
      renderSelfRatios([adapter("soniq-postgres")], computeSelfRatios({ x: { drain_retained: 1 } })),
    ).toBe("");
  });
});

describe("options", () => {
  test("options/groups-expand-once-in-order", () => {
    expect(expandWorkloads(["w1-c10", "w7", "w1-c10", "w7-500"])).toEqual([
      "w1-c10",
      "w7-500",
      "w7-2000",
      "w7-5000",
    ]);
    expect(expandWorkloads(["w1-limited"])).toEqual(["w1-limited-conc", "w1-limited-rate"]);
    expect(() => expandWorkloads(["w10"])).toThrow(/unknown workload "w10"/);
  });

  test("options/steps-group-is-w9-and-w9s-at-their-sizes", () => {
    expect(OPTIONAL_WORKLOADS).toContain("w9");
    expect(OPTIONAL_WORKLOADS).toContain("w9s");
    expect(expandWorkloads(["steps"])).toEqual(["w9", "w9s"]);
    const full = parseOptions(["--workloads", "w9,w9s", "--runs", "3"], {});
    expect(full).not.toBe("help");
    if (full === "help") return;
    expect(full.workloads).toEqual(["w9", "w9s"]);
    expect(full.sizes).toMatchObject({ stepJobs: 2_000, sleepJobs: 1_000 });
    const quick = parseOptions(["--quick", "--workloads", "steps"], {});
    expect(quick !== "help" && quick.sizes).toMatchObject({ stepJobs: 100, sleepJobs: 50 });
    // The default set stays the job-queue workloads.
    const defaults = parseOptions([], {});
    expect(defaults !== "help" && defaults.workloads).not.toContain("w9");
  });

  test("options/w9-applies-to-durable-steps-and-the-engines-to-w9-only", () => {
    for (const id of ["soniq-postgres", "soniq-sqlite", "soniq-memory", "dbos", "openworkflow"]) {
      expect(applies(findSystem(id), "w9"), id).toBe(true);
      expect(applies(findSystem(id), "w9s"), id).toBe(true);
    }
    for (const id of ["graphile-fast", "pg-boss", "bullmq", "plainjob", "limit"]) {
      expect(applies(findSystem(id), "w9"), id).toBe(false);
      expect(applies(findSystem(id), "w9s"), id).toBe(false);
    }
    // DBOS and OpenWorkflow are no job queue rows: W1-W8 and the optional queue workloads skip them.
    for (const id of ["dbos", "openworkflow"]) {
      for (const w of ["w1-c10", "w2-single", "w3", "w4", "w8", "w6", "w7-500", "scale-1"] as const) {
        expect(applies(findSystem(id), w), `${id} ${w}`).toBe(false);
      }
    }
    expect(applies(findSystem("soniq-postgres"), "w1-c10")).toBe(true);
  });

  test("options/retained-group-is-w5-and-w5b", () => {
    expect(OPTIONAL_WORKLOADS).toContain("w5b");
    expect(expandWorkloads(["retained"])).toEqual(["w5", "w5b"]);
    expect(expandWorkloads(["w5b", "retained"])).toEqual(["w5b", "w5"]);
  });

  test("options/w5b-applies-where-w5-does", () => {
    const ids = [
      "soniq-postgres",
      "soniq-postgres-node24",
      "graphile-fast",
      "graphile-default",
      "soniq-memory",
      "pg-boss",
    ];
    for (const id of ids) {
      const system = findSystem(id);
      expect(applies(system, "w5b"), id).toBe(applies(system, "w5"));
    }
    expect(applies(findSystem("soniq-postgres"), "w5b")).toBe(true);
    expect(applies(findSystem("soniq-postgres-node24"), "w5b")).toBe(true);
    expect(applies(findSystem("graphile-fast"), "w5b")).toBe(true);
    expect(applies(findSystem("soniq-memory"), "w5b")).toBe(false);
    // The sweep runs where the system has one of its own (Soniq on Postgres), not on a table that deletes done jobs.
    expect(findSystem("soniq-postgres-node24").openSweep).toBeDefined();
    expect(findSystem("graphile-fast").openSweep).toBeUndefined();
  });
});

describe("start reports", () => {
  const report = (counts: number[], times: number[], first: number, runsPerJob = 1) => ({
    expected: counts.length,
    runsPerJob,
    once: 0,
    duplicates: 0,
    missing: 0,
    unexpected: 0,
    firstStartAt: first,
    lastStartAt: first + 10,
    startTimes: times,
    startCounts: counts,
  });

  test("start-report/merged-across-processes", () => {
    const merged = mergeReports([
      report([1, 0, 1, 0], [5, 0, 7, 0], 5),
      report([0, 1, 1, 0], [0, 6, 3, 0], 3),
    ]);
    expect(merged).toMatchObject({ once: 2, duplicates: 1, missing: 1, firstStartAt: 3, lastStartAt: 15 });
    expect(merged.startTimes).toEqual([5, 6, 3, 0]);
  });

  test("start-report/retried-jobs-count-every-attempt", () => {
    // Three runs a job: index 0 ran 3 times across the processes, 1 only twice, 2 four times.
    const merged = mergeReports([report([2, 1, 2], [5, 6, 7], 5, 3), report([1, 1, 2], [9, 8, 3], 3, 3)]);
    expect(merged, "per-index counts against the three runs each job gets").toMatchObject({
      runsPerJob: 3,
      once: 1,
      duplicates: 1,
      missing: 1,
    });
  });

  test("start-report/runs-per-job-must-agree", () => {
    expect(() => mergeReports([report([1], [1], 1, 1), report([1], [1], 1, 3)])).toThrow(/shared/);
  });
});
