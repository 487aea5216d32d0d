/** The smoke run end to end on the two cheapest rows: it runs, verifies, writes JSON and exits 0. */
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";

const BENCH = resolve(dirname(fileURLToPath(import.meta.url)), "..");

test("bench/quick-runs-and-verifies", () => {
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
      "soniq-memory,limit",
      "--json",
      json,
    ],
    { cwd: BENCH, encoding: "utf8", timeout: 170_000 },
  );
  expect(res.stderr).not.toContain("INVALID");
  expect(res.status).toBe(0);
  const doc = JSON.parse(readFileSync(resolve(BENCH, json), "utf8")) as {
    invalid: Record<string, unknown>;
    samples: { system: string; workload: string; valid: boolean }[];
  };
  expect(doc.invalid).toEqual({});
  const ran = (system: string) =>
    doc.samples
      .filter((s) => s.system === system && s.valid)
      .map((s) => s.workload)
      .sort();
  // W8 (the fan-in flow) applies to systems with workflows only.
  expect(ran("soniq-memory")).toEqual(["w1-c10", "w2-single", "w3", "w4", "w4-retry", "w8"]);
  expect(ran("limit")).toEqual(["w1-c10", "w2-single", "w3", "w4", "w4-retry"]);
  expect(res.stdout).toContain("| W8 flow (ms) |");
  expect(res.stdout).toContain("| limit (hand-written SQL on pg) |");
});
