/**
 * The maintenance lease follows the holder's liveness as the taker sees it (DESIGN 7): a worker that died
 * holding the lease (with the long TTL its own staleAfterMs allowed) does not block a peer whose
 * staleAfterMs says the holder is stale.
 */
import { describe, expect, it } from "vitest";
import { MAINTENANCE_LEASE } from "../src/worker/upkeep.js";
import { memoryApps, memoryBackend } from "./memory.js";
import { eventually } from "./support.js";

const app = memoryApps();

describe("runtime/maintenance-lease", () => {
  it("runtime/lease-taken-from-stale-holder: a peer with staleAfterMs 1 s recovers the jobs of a dead lease holder whose TTL runs for minutes", async () => {
    let skewMs = 0; // the backend's clock, moved forward instead of sleeping
    const backend = memoryBackend({ now: () => Date.now() + skewMs });
    const soniq = app({}, backend);
    soniq.job("lease.orphan", async () => "recovered");
    const { id } = await soniq.jobs.enqueue("lease.orphan", {});
    const dead = "00000000-0000-4000-8000-0000000000de";
    await backend.workers.register({
      id: dead,
      hostname: "killed",
      pid: 1,
      queues: [],
      concurrency: 1,
      version: null,
      metadata: null,
    });
    expect(await backend.leases.tryAcquire(MAINTENANCE_LEASE, dead, 125_000)).toBe(true);
    await backend.runs.claim({ queues: ["default"], limit: 1, workerId: dead });
    skewMs = 5000; // the dead worker's last heartbeat is now 5 s old; its lease has 120 s to run

    const worker = soniq.worker({ staleAfterMs: 1000, heartbeatIntervalMs: 100, pollIntervalMs: 50 });
    await worker.start();
    try {
      await eventually(async () => {
        expect(await soniq.jobs.get(id)).toMatchObject({ status: "done", result: "recovered" });
      });
    } finally {
      await worker.stop();
    }
  }, 15_000);
});
