/** How a worker row's state is derived for the workers page. */
import { describe, expect, it } from "vitest";
import { workerState } from "../src/data/workers.js";

describe("worker state", () => {
  it("workers/state: live within the threshold, stale when silent, stopped and stopping as marked", async () => {
    const now = Date.parse("2026-12-01T12:00:00Z");
    const w = (status: "active" | "stopping" | "stopped", ageMs: number) => ({
      id: "w",
      hostname: "h",
      pid: 1,
      queues: [],
      concurrency: 1,
      status,
      lastHeartbeat: new Date(now - ageMs),
      startedAt: new Date(now - 3_600_000),
      version: null,
      metadata: null,
    });
    expect(workerState(w("active", 1_000), 30_000, now)).toBe("live");
    expect(workerState(w("active", 31_000), 30_000, now)).toBe("stale");
    expect(workerState(w("stopping", 1_000), 30_000, now)).toBe("stopping");
    expect(workerState(w("stopping", 31_000), 30_000, now)).toBe("stale");
    expect(workerState(w("stopped", 1_000), 30_000, now)).toBe("stopped");
  });
});
