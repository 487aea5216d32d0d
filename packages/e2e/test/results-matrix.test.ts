/**
 * `waitFor`, `handle.result()` and `Job.progress` on every backend, with the waiter on another instance than
 * the worker (the same store: for SQLite and Postgres a second connection, as another process would have).
 */
import { isSoniqError, PermanentError } from "@soniq/core";
import { describe, expect, it } from "vitest";
import { ALL_KINDS, eventually, gate, matrixHarness, rejection } from "./runtime-support.js";

describe.each(ALL_KINDS.map((make) => [make().name, make] as const))("results on %s", (_name, make) => {
  const h = matrixHarness(make);

  it("results/outcomes-across-instances: done, dead letter, cancelled, timeout and unknown id, waited for from a peer", async () => {
    const worker = await h.app();
    const waiter = await h.app(h.kind.createPeer());
    const started = gate<string>();
    const ok = worker.job("results.ok", async (args: { n: number }) => ({ n: args.n }), { queue: h.queue });
    worker.job(
      "results.fail",
      async () => {
        throw new PermanentError("no such account");
      },
      { queue: h.queue },
    );
    worker.job(
      "results.hang",
      (_args, ctx) =>
        new Promise((_resolve, reject) => {
          started.open(ctx.jobId);
          ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason));
        }),
      { queue: h.queue },
    );
    for (const name of ["results.ok", "results.fail", "results.hang"]) {
      waiter.job(name, async () => null, { queue: h.queue }); // the producer knows the names, runs nothing
    }
    await h.started(worker.worker({ queues: [h.queue], pollIntervalMs: 20, heartbeatIntervalMs: 50 }));

    const handle = await ok.enqueue({ n: 7 });
    expect(await waiter.jobs.waitFor(handle.id, { timeoutMs: 10_000 })).toEqual({
      status: "done",
      result: { n: 7 },
    });
    expect(await handle.result({ timeoutMs: 1000 })).toEqual({ status: "done", result: { n: 7 } });

    const failed = await waiter.jobs.enqueue("results.fail", {});
    const dead = await failed.result({ timeoutMs: 10_000 });
    expect(dead).toMatchObject({ status: "dead_letter", reason: "permanent_failure" });
    expect(dead.status === "dead_letter" && dead.lastError).toContain("no such account");

    const hanging = await waiter.jobs.enqueue("results.hang", {});
    expect(await started.promise).toBe(hanging.id);
    const cancelledOutcome = hanging.result({ timeoutMs: 10_000 });
    expect(await waiter.jobs.cancel(hanging.id)).toBe(true);
    expect(await cancelledOutcome).toEqual({ status: "cancelled" });

    const queued = await waiter.jobs.enqueue("results.ok", { n: 1 }, { delayMs: 60_000 });
    expect(isSoniqError(await rejection(queued.result({ timeoutMs: 100 })), "SONIQ_TIMEOUT")).toBe(true);
    const missing = "0b6e7a3c-1f2d-4c5b-9a8e-7d6c5b4a3f21";
    expect(isSoniqError(await rejection(waiter.jobs.waitFor(missing)), "SONIQ_JOB_NOT_FOUND")).toBe(true);
  }, 30_000);

  it("results/progress-visible-to-a-peer: a running job's progress shows in jobs.get and jobs.list of another instance", async () => {
    const worker = await h.app();
    const reader = await h.app(h.kind.createPeer());
    const release = gate();
    worker.job(
      "results.progress",
      async (_args, ctx) => {
        for (let i = 1; i <= 500; i++) ctx.progress({ done: i, total: 500 });
        await release.promise;
        ctx.progress(1);
        return "ok";
      },
      { queue: h.queue },
    );
    await h.started(worker.worker({ queues: [h.queue], pollIntervalMs: 20, heartbeatIntervalMs: 50 }));
    const { id } = await worker.jobs.enqueue("results.progress", {});
    await eventually(async () => {
      const job = await reader.jobs.get(id);
      expect(job?.status).toBe("processing");
      expect(job?.progress).toEqual({ done: 500, total: 500 });
    });
    const [listed] = await reader.jobs.list({ queue: h.queue });
    expect(listed?.progress).toEqual({ done: 500, total: 500 });
    release.open();
    await eventually(async () => {
      expect(await reader.jobs.get(id)).toMatchObject({ status: "done", progress: 1 });
    });
  }, 30_000);
});
