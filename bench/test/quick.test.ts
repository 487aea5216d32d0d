/**
 * The smoke run end to end, once, on every system a quick run takes (what `pnpm bench --quick` runs) plus Soniq's
 * Node 24 rows: every row runs, verifies and writes JSON, the peers' plumbing works (a Redis row with its key
 * prefix and Redis CPU; in-process SQLite queues, liteque on its own better-sqlite3 11.9.1; setup, producer and
 * worker children on the registry's Node 24 with better-sqlite3 13 hooked in), the CPU-per-job figures are
 * read, the ratios pair each Soniq row with peers of its own runtime and storage, and BullMQ's W8 row (its own
 * flows: one parent over n-1 children) is verified beside Soniq's. `.ci/run` has no separate smoke stage: this is it.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";
import { ratioPeers } from "../src/report.js";
import { SYSTEMS } from "../src/systems/index.js";

const BENCH = resolve(dirname(fileURLToPath(import.meta.url)), "..");

interface BenchDoc {
  invalid: Record<string, unknown>;
  samples: { system: string; workload: string; valid: boolean; metrics: Record<string, number> }[];
  ratios: { soniq: string; peer: string; metric: string }[];
}

test("bench/quick-runs-and-verifies-every-system", () => {
  const node24 = ["soniq-postgres-node24", "soniq-sqlite-node24"];
  const systems = [...SYSTEMS.filter((s) => !s.optional && !s.notInQuick).map((s) => s.id), ...node24];
  const json = "results/test-quick.json";
  rmSync(resolve(BENCH, json), { force: true });
  const res = spawnSync(
    process.execPath,
    [
      "--conditions=source",
      "--import",
      "tsx",
      "src/main.ts",
      "--quick",
      "--systems",
      systems.join(","),
      "--json",
      json,
    ],
    // 100 s alone on a 2-core host; beside the rest of `pnpm test:e2e` and the Node 22/24/26 passes it once took
    // over 400 s there. The limit only keeps a hung run from holding CI.
    { cwd: BENCH, encoding: "utf8", timeout: 900_000 },
  );
  expect(res.stderr).not.toContain("INVALID");
  expect(res.status, res.stderr.slice(-2_000)).toBe(0);
  const doc = JSON.parse(readFileSync(resolve(BENCH, json), "utf8")) as BenchDoc;
  expect(doc.invalid).toEqual({});
  const sample = (system: string, workload: string) =>
    doc.samples.find((s) => s.system === system && s.workload === workload);
  const ran = (system: string) =>
    doc.samples
      .filter((s) => s.system === system && s.valid)
      .map((s) => s.workload)
      .sort();

  // Every queue drains, valid, with its worker CPU read; W8 (the fan-in flow) only where there are workflows.
  const queues = systems.filter((id) => !["dbos", "openworkflow"].includes(id));
  for (const system of queues) {
    expect(sample(system, "w1-c10")?.valid, system).toBe(true);
    expect(sample(system, "w1-c10")?.metrics.c10_worker_cpu_us, system).toBeGreaterThan(0);
  }
  expect(ran("soniq-memory")).toEqual(["w1-c10", "w2-single", "w3", "w4", "w4-retry", "w8"]);
  expect(ran("limit")).toEqual(["w1-c10", "w2-single", "w3", "w4", "w4-retry"]);
  // W4 and W4 retry: the cold tenth reported apart from the rate over the rest, and the whole drain's rate.
  for (const [workload, metric] of [
    ["w4", "fail"],
    ["w4-retry", "retry"],
  ] as const) {
    const m = sample("soniq-postgres", workload)?.metrics;
    for (const name of [metric, `${metric}_cold`, `${metric}_all`])
      expect(m?.[name], `${workload} ${name}`).toBeGreaterThan(0);
  }
  // W2 async: Soniq's enqueue with durability "async", on PostgreSQL (where it changes the commit), compared with
  // the peers' single enqueue.
  expect(sample("soniq-postgres", "w2-single-async")?.metrics.single_enqueue_async).toBeGreaterThan(0);
  expect(
    doc.ratios.some(
      (r) => r.soniq === "soniq-postgres" && r.peer === "bullmq" && r.metric === "single_enqueue_async",
    ),
  ).toBe(true);
  // The store's CPU: Redis for BullMQ, the database's backends for a Postgres row on Node 24.
  expect(sample("bullmq", "w1-c10")?.metrics.c10_store_cpu_us).toBeGreaterThan(0);
  expect(sample("soniq-postgres-node24", "w1-c10")?.metrics.c10_store_cpu_us).toBeGreaterThan(0);

  // Ratios only against peers of the same runtime and storage, and the pairs a reader looks for are there.
  for (const r of doc.ratios) expect(ratioPeers(r.soniq), `${r.soniq}/${r.peer}`).toContain(r.peer);
  const pairs = new Set(doc.ratios.map((r) => `${r.soniq}/${r.peer}`));
  for (const pair of [
    "soniq-postgres/graphile-fast",
    "soniq-postgres/bullmq",
    "soniq-postgres/limit",
    "soniq-postgres-node24/graphile-018-fast",
    "soniq-sqlite/liteque",
    "soniq-sqlite/plainjob",
  ])
    expect(pairs, pair).toContain(pair);

  // BullMQ's W8 row beside Soniq's: the harness checks n-1 jobs pending after the start (BullMQ's parent waits
  // in `waiting-children`), every step started exactly once, the fan-in job after all the others, and n done.
  for (const system of ["soniq-postgres", "bullmq"]) {
    const flow = sample(system, "w8");
    expect(flow?.valid, system).toBe(true);
    for (const metric of ["flow_start_ms", "flow_ms", "flow_per_step_us", "flow_plain_per_job_us"])
      expect(flow?.metrics[metric], `${system} ${metric}`).toBeGreaterThan(0);
  }
  expect(res.stdout).toContain("| W8 flow (ms) |");
  expect(res.stdout).toContain("| BullMQ 6.7.0 (Redis) |");
  expect(res.stdout).toContain("| limit (hand-written SQL on pg) |");
}, 900_000);
