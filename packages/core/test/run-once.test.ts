/** `runOnce` as the operator tools see it: the names it serves, and the recovery pass it runs before claiming. */
import { describe, expect, it } from "vitest";
import { memoryApps } from "./memory.js";

const app = memoryApps();

describe("runtime/run-once", () => {
  it("runtime/run-once-records-task-names: the task registry names the jobs a runOnce worker serves", async () => {
    const soniq = app();
    soniq.job("once.named", async () => "ok");
    soniq.job("once.other", async () => "ok");
    await soniq.jobs.enqueue("once.named", {});
    const worker = soniq.worker();
    expect(await worker.runOnce()).toBe(1);
    const rows = await soniq.backend.workers.listTaskNames();
    expect(
      rows
        .filter((r) => r.workerId === worker.id)
        .map((r) => r.taskName)
        .sort(),
    ).toEqual(["once.named", "once.other"]);
  });

  it("runtime/run-once-recovers-first: runOnce requeues a stopped worker's processing job before it claims, and runs it", async () => {
    const soniq = app();
    soniq.job("once.orphan", async () => "recovered");
    const { id } = await soniq.jobs.enqueue("once.orphan", {});
    const dead = "00000000-0000-4000-8000-00000000dead";
    await soniq.backend.workers.register({
      id: dead,
      hostname: "gone",
      pid: 1,
      queues: ["default"],
      concurrency: 1,
      version: "test",
      metadata: null,
    });
    const claimed = await soniq.backend.runs.claim({ queues: ["default"], limit: 1, workerId: dead });
    expect(claimed.jobs.map((j) => j.id)).toEqual([id]);
    await soniq.backend.workers.stop(dead);
    expect(await soniq.worker().runOnce()).toBe(1);
    expect(await soniq.jobs.get(id)).toMatchObject({ status: "done", result: "recovered" });
  });
});
