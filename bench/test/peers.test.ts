/**
 * The peers' plumbing end to end, one cheap drain each: a Redis row (BullMQ: key prefix, Redis CPU), an
 * in-process SQLite queue (plainjob) and the Node 24 rows (setup, producer and worker children on the
 * registry's Node 24, better-sqlite3 13 hooked in): every row valid and verified, with the CPU-per-job
 * figures, and the ratios paired by runtime and storage.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";

const BENCH = resolve(dirname(fileURLToPath(import.meta.url)), "..");

test("bench/peers-run-on-their-runtime-and-store", () => {
  const json = "results/test-peers.json";
  rmSync(resolve(BENCH, json), { force: true });
  const systems = [
    "soniq-postgres",
    "bullmq",
    "plainjob",
    "soniq-sqlite",
    "soniq-postgres-node24",
    "soniq-sqlite-node24",
  ];
  const res = spawnSync(
    process.execPath,
    [
      "--conditions=source",
      "--import",
      "tsx",
      "src/main.ts",
      "--quick",
      "--workloads",
      "w1-c10",
      "--systems",
      systems.join(","),
      "--json",
      json,
    ],
    { cwd: BENCH, encoding: "utf8", timeout: 280_000 },
  );
  expect(res.stderr).not.toContain("INVALID");
  expect(res.status).toBe(0);
  const doc = JSON.parse(readFileSync(resolve(BENCH, json), "utf8")) as {
    invalid: Record<string, unknown>;
    samples: { system: string; workload: string; valid: boolean; metrics: Record<string, number> }[];
    ratios: { soniq: string; peer: string; metric: string }[];
  };
  expect(doc.invalid).toEqual({});
  for (const system of systems) {
    const drain = doc.samples.find((s) => s.system === system && s.workload === "w1-c10");
    expect(drain?.valid, system).toBe(true);
    expect(drain?.metrics.c10_worker_cpu_us, system).toBeGreaterThan(0);
  }
  const storeCpu = (system: string) =>
    doc.samples.find((s) => s.system === system && s.workload === "w1-c10")?.metrics.c10_store_cpu_us;
  expect(storeCpu("bullmq")).toBeGreaterThan(0);
  expect(storeCpu("soniq-postgres-node24")).toBeGreaterThan(0);
  const pairs = new Set(doc.ratios.map((r) => `${r.soniq}/${r.peer}`));
  expect([...pairs].sort()).toEqual(["soniq-postgres/bullmq", "soniq-sqlite/plainjob"]);
}, 300_000);
