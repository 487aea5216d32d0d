/**
 * The durable-step rows, W9/W9s, beside the durable-execution engines (DBOS Transact, OpenWorkflow) on the same PostgreSQL: every step's
 * function once and every checkpoint stored, every job slept its 2 s, never more runs at once than the slots.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";

const BENCH = resolve(dirname(fileURLToPath(import.meta.url)), "..");

interface BenchDoc {
  invalid: Record<string, unknown>;
  samples: { system: string; workload: string; valid: boolean; metrics: Record<string, number> }[];
  ratios: { soniq: string; peer: string; metric: string }[];
}

/** Runs the quick bench from the sources; returns its JSON, stdout and stderr once it exited 0. */
function runQuick(
  json: string,
  workloads: string,
  systems: readonly string[],
): { doc: BenchDoc; stdout: string } {
  rmSync(resolve(BENCH, json), { force: true });
  const res = spawnSync(
    process.execPath,
    [
      "--conditions=source",
      "--import",
      "tsx",
      "src/main.ts",
      "--quick",
      "--workloads",
      workloads,
      "--systems",
      systems.join(","),
      "--json",
      json,
    ],
    { cwd: BENCH, encoding: "utf8", timeout: 280_000 },
  );
  expect(res.stderr).not.toContain("INVALID");
  expect(res.status).toBe(0);
  return { doc: JSON.parse(readFileSync(resolve(BENCH, json), "utf8")) as BenchDoc, stdout: res.stdout };
}

test("bench/durable-steps-rows-are-verified-beside-dbos-and-openworkflow", () => {
  // The harness checks every step function ran exactly once, the storage holds every done checkpoint, every job
  // slept at least its 2 s between its first run and its end, and no more runs than the concurrency at once.
  const systems = ["soniq-postgres", "soniq-sqlite", "dbos", "openworkflow"];
  const { doc, stdout } = runQuick("results/test-peer-steps.json", "w9,w9s", systems);
  expect(doc.invalid).toEqual({});
  for (const system of systems) {
    const w9 = doc.samples.find((s) => s.system === system && s.workload === "w9");
    expect(w9?.valid, system).toBe(true);
    expect(w9?.metrics.w9_steps_per_sec, system).toBeGreaterThan(0);
    expect(w9?.metrics.w9_plain_jobs_per_sec, system).toBeGreaterThan(0);
    const w9s = doc.samples.find((s) => s.system === system && s.workload === "w9s");
    expect(w9s?.valid, system).toBe(true);
    expect(w9s?.metrics.w9s_min_slept_ms, system).toBeGreaterThanOrEqual(1_950);
    expect(w9s?.metrics.w9s_max_running, system).toBeLessThanOrEqual(10);
  }
  const metric = (system: string, workload: string, name: string) =>
    doc.samples.find((s) => s.system === system && s.workload === workload)?.metrics[name];
  // On Postgres the store's CPU per step is read; a sleeping Soniq or OpenWorkflow job runs again at its wake
  // time, a DBOS workflow waits in its process.
  expect(metric("soniq-postgres", "w9", "w9_store_cpu_us_per_step")).toBeGreaterThan(0);
  expect(metric("dbos", "w9", "w9_store_cpu_us_per_step")).toBeGreaterThan(0);
  expect(metric("soniq-postgres", "w9s", "w9s_runs_per_job_x")).toBe(2);
  expect(metric("openworkflow", "w9s", "w9s_runs_per_job_x")).toBe(2);
  expect(metric("dbos", "w9s", "w9s_runs_per_job_x")).toBe(1);
  const pairs = new Set(doc.ratios.map((r) => `${r.soniq}/${r.peer}`));
  expect([...pairs].sort()).toEqual(["soniq-postgres/dbos", "soniq-postgres/openworkflow"]);
  expect(stdout).toContain("| W9 steps/s |");
  expect(stdout).toContain("| DBOS Transact 5.3.0 postgres |");
}, 300_000);
