/**
 * The orphan give-back is every worker's duty, not the maintenance-lease holder's (issue 43): a worker whose
 * claim answer was lost gives the job back at its own maintenance tick while another worker holds the lease.
 * Recovery (the holder's job) reaches only stale and stopped workers, so if only the holder gave back its
 * orphans, the other worker's job would stay processing for as long as that worker lives.
 */
import { describe, expect, it } from "vitest";
import type { Backend } from "../src/contract/index.js";
import { MAINTENANCE_LEASE } from "../src/worker/upkeep.js";
import { memoryApps, memoryBackend, overriding } from "./memory.js";
import { eventually } from "./support.js";

const app = memoryApps();

describe("runtime/orphans", () => {
  it("runtime/orphan-given-back-without-lease: a worker that does not hold the maintenance lease still queues again, within its cadence, a job processing under its id that it does not hold", async () => {
    const base = memoryBackend();
    // Who asked for the maintenance lease, and whether they got it.
    const asks: { holder: string; got: boolean }[] = [];
    const backend: Backend<unknown> = overriding(base, "leases", {
      tryAcquire: async (...args: Parameters<typeof base.leases.tryAcquire>) => {
        const got = await base.leases.tryAcquire(...args);
        if (args[0] === MAINTENANCE_LEASE) asks.push({ holder: args[1], got });
        return got;
      },
    });
    const soniq = app({ allowUnknownJobNames: true }, backend);
    const options = { queues: ["work"], heartbeatIntervalMs: 100, staleAfterMs: 1000, pollIntervalMs: 10 };
    const holder = soniq.worker(options);
    await holder.start();
    await eventually(() => expect(asks).toContainEqual({ holder: holder.id, got: true }));
    const other = soniq.worker(options);
    await other.start();
    await eventually(() => expect(asks).toContainEqual({ holder: other.id, got: false }));

    // A claim made under the other worker's id whose answer it never saw, in a queue neither worker serves:
    // only that worker's give-back can move it (recovery skips it: the worker is alive).
    const orphan = await soniq.jobs.enqueue("orphans.lost", {}, { queue: "elsewhere" });
    const claimed = await base.runs.claim({ queues: ["elsewhere"], limit: 1, workerId: other.id });
    expect(claimed.jobs.map((j) => j.id)).toEqual([orphan.id]);
    // Maintenance cadence: min(maintenanceIntervalMs, staleAfterMs / 2) = 500 ms; allow a few ticks.
    await eventually(async () => expect((await soniq.jobs.get(orphan.id))?.status).toBe("queued"), 3000);
    const row = await soniq.jobs.get(orphan.id);
    expect(row?.attempts).toBe(1);
    expect(row?.workerId).toBeNull();
    // The lease never moved: the give-back was the other worker's own, without the lease.
    expect(asks.filter((a) => a.got).map((a) => a.holder)).not.toContain(other.id);
    await Promise.all([other.stop(), holder.stop()]);
  });
});
