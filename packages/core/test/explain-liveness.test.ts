/**
 * explain tells a running job's holder's heartbeat age, and says `suspect` once the worker missed three
 * heartbeats, long before it is stale (60 s by default) and recovery requeues the job.
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_STALE_AFTER_MS } from "../src/worker/liveness.js";
import { resolveWorkerOptions } from "../src/worker/options.js";
import { memoryApps, memoryBackend } from "./memory.js";

const app = memoryApps();

async function heldJob(heartbeatAgeMs: number) {
  let offset = -heartbeatAgeMs; // the backend's clock while the worker registers and claims
  const backend = memoryBackend({ now: () => Date.now() + offset });
  const soniq = app({ allowUnknownJobNames: true }, backend);
  const workerId = "00000000-0000-4000-8000-0000000000b1";
  await backend.workers.register({
    id: workerId,
    hostname: "host-1",
    pid: 42,
    queues: [],
    concurrency: 1,
    version: null,
    metadata: null,
  });
  const { id } = await soniq.jobs.enqueue("l.job", {});
  await backend.runs.claim({ queues: null, limit: 1, workerId });
  offset = 0;
  return { soniq, id, workerId };
}

describe("explain/liveness", () => {
  it("explain/heartbeat-age: a running job's evidence gives the holder's heartbeat age, no suspect note while it beats", async () => {
    const { soniq, id, workerId } = await heldJob(2000);
    const e = await soniq.jobs.explain(id);
    expect(e.verdict).toBe("running");
    const evidence = e.reasons[0]?.evidence ?? {};
    expect(evidence).toMatchObject({ workerId, suspect: null, staleAfterMs: DEFAULT_STALE_AFTER_MS });
    expect(evidence.heartbeatAgeMs).toBeGreaterThanOrEqual(2000);
    expect(evidence.heartbeatAgeMs).toBeLessThan(10_000);
    expect(e.reasons[0]?.message).toMatch(/last heartbeat \d+ s ago/);
  });

  it("explain/suspect-before-stale: three missed heartbeats make the holder suspect, with when recovery is due", async () => {
    const { soniq, id } = await heldJob(20_000);
    const e = await soniq.jobs.explain(id);
    expect(e.verdict).toBe("running"); // not stale yet: recovery has not started
    expect(e.reasons.map((r) => r.code)).toEqual(["running"]);
    const suspect = e.reasons[0]?.evidence.suspect;
    expect(suspect).toMatch(
      /^no heartbeat for 2\d s \(expected every 5 s\): the worker may be dead or blocked/,
    );
    expect(e.reasons[0]?.message).toContain("suspect:");
  });

  it("explain/default-stale-after: a worker is stale after 60 s without a heartbeat by default", async () => {
    expect(resolveWorkerOptions({}).staleAfterMs).toBe(60_000);
    const { soniq, id } = await heldJob(61_000);
    const e = await soniq.jobs.explain(id);
    expect(e.verdict).toBe("stuck");
    expect(e.reasons.map((r) => r.code)).toEqual(["running", "held_by_stale_worker"]);
    expect(e.reasons[1]?.evidence.heartbeatAgeMs).toBeGreaterThanOrEqual(61_000);
  });
});
