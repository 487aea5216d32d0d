import assert from "node:assert/strict";
import type { WorkerRegistration } from "@soniq/core";
import { defineCase } from "../define-case.js";
import { eventually } from "../eventually.js";
import type { CaseContext } from "../types.js";
import { claimOne, deepEqual, enqueue, equal, near, processingJob } from "./helpers.js";

function registration(ctx: CaseContext, overrides: Partial<WorkerRegistration> = {}): WorkerRegistration {
  return {
    id: ctx.id(),
    hostname: "conformance-host",
    pid: 4242,
    queues: ["a", "b"],
    concurrency: 4,
    version: "1.2.3",
    metadata: { region: "test" },
    ...overrides,
  };
}

export const workerCases = [
  defineCase({
    id: "workers/register-heartbeat-stop",
    title:
      "a registered worker is listed active; heartbeat refreshes it; after stop, heartbeat returns false",
    async run(ctx) {
      const reg = registration(ctx);
      await ctx.backend.registerWorker(reg);
      const listed = (await ctx.backend.listWorkers()).find((w) => w.id === reg.id);
      assert.ok(listed, "listWorkers must include the registered worker");
      equal(listed.status, "active");
      equal(listed.hostname, reg.hostname);
      equal(listed.pid, reg.pid);
      deepEqual(listed.queues, reg.queues);
      equal(listed.concurrency, reg.concurrency);
      equal(listed.version, reg.version);
      deepEqual(listed.metadata, reg.metadata);
      near(listed.startedAt, Date.now(), 60_000, "startedAt");
      equal(
        await ctx.backend.heartbeat(reg.id, { busy: 2 }),
        true,
        "heartbeat of an active worker must return true",
      );
      const beat = (await ctx.backend.listWorkers()).find((w) => w.id === reg.id);
      deepEqual(beat?.metadata, { busy: 2 }, "heartbeat with metadata must store it");
      assert.ok(
        (beat?.lastHeartbeat.getTime() ?? 0) >= listed.lastHeartbeat.getTime(),
        "heartbeat must not move last_heartbeat back",
      );
      await ctx.backend.stopWorker(reg.id);
      const stopped = (await ctx.backend.listWorkers()).find((w) => w.id === reg.id);
      equal(stopped?.status, "stopped", "stopWorker must mark the worker stopped");
      equal(await ctx.backend.heartbeat(reg.id), false, "heartbeat of a stopped worker must return false");
      equal(await ctx.backend.heartbeat(ctx.id()), false, "heartbeat of an unknown worker must return false");
    },
  }),
  defineCase({
    id: "workers/stale-recovery-requeues-only-stale-workers-jobs",
    title:
      "recoverStaleWorkers stops workers older than the threshold and requeues only their processing jobs",
    requires: { inspector: ["backdateWorkerHeartbeat"] },
    async run(ctx) {
      const stale = registration(ctx);
      const live = registration(ctx);
      await ctx.backend.registerWorker(stale);
      await ctx.backend.registerWorker(live);
      const queue = ctx.queue();
      const lost = await enqueue(ctx, { queue });
      const lostClaim = await claimOne(ctx, queue, stale.id);
      const kept = await enqueue(ctx, { queue });
      const keptClaim = await claimOne(ctx, queue, live.id);
      await ctx.inspector.backdateWorkerHeartbeat(stale.id, 600_000);
      const recovery = await ctx.backend.recoverStaleWorkers(300_000);
      assert.ok(
        recovery.workerIds.includes(stale.id),
        "the worker silent for 10 min must be reported stale at a 5 min threshold",
      );
      assert.ok(
        !recovery.workerIds.includes(live.id),
        "a worker that just registered must not be reported stale",
      );
      assert.ok(recovery.requeuedJobIds.includes(lost.id), "the stale worker's job must be requeued");
      assert.ok(!recovery.requeuedJobIds.includes(kept.id), "the live worker's job must not be requeued");
      const requeued = await ctx.backend.getJob(lost.id);
      equal(requeued?.status, "queued", "the stale worker's job must be queued again");
      equal(
        requeued?.attempts,
        lostClaim.attempts,
        "recovery must keep attempts (the claim counted the run)",
      );
      equal(requeued?.workerId, null, "recovery must clear the worker id");
      equal(
        (await ctx.backend.getJob(kept.id))?.status,
        "processing",
        "the live worker's job must stay processing",
      );
      equal(
        await ctx.backend.heartbeat(stale.id),
        false,
        "the stale worker's next heartbeat must return false",
      );
      equal(await ctx.backend.heartbeat(live.id), true);
      const late = await ctx.backend.complete([
        { id: lost.id, attempt: lostClaim.attempts, result: null, resultTtlMs: 60_000 },
      ]);
      equal(late, 0, "the stale worker's late completion must not apply");
      equal(keptClaim.id, kept.id);
      const again = await ctx.backend.recoverStaleWorkers(300_000);
      assert.ok(!again.requeuedJobIds.includes(lost.id), "a second recovery must not requeue the job again");
    },
  }),
  defineCase({
    id: "workers/expired-done-rows-deleted",
    title: "deleteExpiredJobs deletes done rows whose result TTL passed and keeps the others",
    async run(ctx) {
      const short = await processingJob(ctx);
      const long = await processingJob(ctx);
      await ctx.backend.complete([
        { id: short.id, attempt: short.attempts, result: 1, resultTtlMs: 1 },
        { id: long.id, attempt: long.attempts, result: 2, resultTtlMs: 3_600_000 },
      ]);
      await eventually(
        async () => {
          await ctx.backend.deleteExpiredJobs();
          equal(
            await ctx.backend.getJob(short.id),
            null,
            "a done row with a 1 ms TTL must be deleted once expired",
          );
        },
        { timeoutMs: 5000, intervalMs: 20 },
      );
      equal((await ctx.backend.getJob(long.id))?.status, "done", "a done row with a 1 h TTL must be kept");
      const queued = await enqueue(ctx, { queue: ctx.queue() });
      await ctx.backend.deleteExpiredJobs();
      assert.notEqual(
        await ctx.backend.getJob(queued.id),
        null,
        "deleteExpiredJobs must never delete unfinished jobs",
      );
    },
  }),
  defineCase({
    id: "workers/task-names",
    title: "registerTaskNames records which worker serves which task name, listed by task name",
    async run(ctx) {
      const reg = registration(ctx);
      await ctx.backend.registerWorker(reg);
      await ctx.backend.registerTaskNames(reg.id, ["conformance.b", "conformance.a"]);
      await ctx.backend.registerTaskNames(reg.id, ["conformance.a"]);
      const mine = (await ctx.backend.listTaskNames()).filter((t) => t.workerId === reg.id);
      deepEqual(
        mine.map((t) => t.taskName),
        ["conformance.a", "conformance.b"],
        "each task name once, ordered by task name",
      );
      for (const t of mine) near(t.lastSeenAt, Date.now(), 60_000, "lastSeenAt");
    },
  }),
];
