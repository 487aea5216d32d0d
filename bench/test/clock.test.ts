import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, test } from "vitest";
import { now } from "../src/clock.js";
import { implausibleMetric } from "../src/plan.js";

describe("the run's clock", () => {
  test("a reading taken in another process falls between two readings of this one", async () => {
    // The producer and the worker host are separate processes whose readings are subtracted from each other:
    // the clock must be one clock for the machine, not one per process.
    const clock = fileURLToPath(new URL("../src/clock.ts", import.meta.url));
    const script = `import(${JSON.stringify(clock)}).then((c) => console.log(c.now()))`;
    const before = now();
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", script],
      { timeout: 60_000 },
    );
    const after = now();
    const child = Number(stdout.trim());
    expect(child).toBeGreaterThanOrEqual(before);
    expect(child).toBeLessThanOrEqual(after);
  });
});

describe("implausibleMetric", () => {
  test("a negative or non-finite metric makes the measurement invalid, naming the metric", () => {
    expect(implausibleMetric({ drain_c10: 43_000, latency_p99: 3.2, c10_wal_bytes: 1_036 })).toBeNull();
    expect(implausibleMetric({ drain_c10: -3_440 })).toMatch(/^drain_c10 = -3440/);
    expect(implausibleMetric({ latency_p50: Number.NaN })).toMatch(/^latency_p50 = NaN/);
    expect(implausibleMetric({ fail: Number.POSITIVE_INFINITY })).toMatch(/^fail = Infinity/);
  });
});
