import assert from "node:assert/strict";
import type { WorkerRegistration } from "@soniq/core/backend";
import { defineCase } from "../define-case.js";
import { eventually } from "../eventually.js";
import type { CaseContext } from "../types.js";
import {
  claimOne,
  deepEqual,
  done,
  enqueue,
  equal,
  near,
  notEqual,
  processingJob,
  settleOne,
  statusOf,
} from "./helpers.js";

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

async function listed(ctx: CaseContext, id: string) {
  return (await ctx.backend.workers.list()).find((w) => w.id === id);
}

export const workerCases = [
  defineCase({
    id: "workers/register-heartbeat-stop",
    title:
      "a registered worker is listed active; heartbeat keeps it and replaces its metadata; after stop, heartbeat returns false",
    async run(ctx) {
      const reg = registration(ctx);
      await ctx.backend.workers.register(reg);
      const row = await listed(ctx, reg.id);
      assert.ok(row, "workers.list must include the registered worker");
      equal(row.status, "active", "a registered worker must be active");
      equal(row.hostname, reg.hostname, "hostname as registered");
      equal(row.pid, reg.pid, "pid as registered");
      deepEqual(row.queues, reg.queues, "queues as registered");
      equal(row.concurrency, reg.concurrency, "concurrency as registered");
      equal(row.version, reg.version, "version as registered");
      deepEqual(row.metadata, reg.metadata, "metadata as registered");
      near(row.startedAt, Date.now(), 60_000, "startedAt");
      near(row.lastHeartbeat, Date.now(), 60_000, "lastHeartbeat at registration");
      equal(await ctx.backend.workers.heartbeat(reg.id, { busy: 2 }), true, "heartbeat of an active worker");
      const beat = await listed(ctx, reg.id);
      deepEqual(beat?.metadata, { busy: 2 }, "heartbeat with metadata must store it");
      equal(await ctx.backend.workers.heartbeat(reg.id, null), true, "heartbeat without metadata");
      equal((await listed(ctx, reg.id))?.metadata, null, "heartbeat with metadata null must clear it");
      assert.ok(
        (beat?.lastHeartbeat.getTime() ?? 0) >= row.lastHeartbeat.getTime(),
        "heartbeat must not move last_heartbeat back",
      );
      await ctx.backend.workers.stop(reg.id);
      equal((await listed(ctx, reg.id))?.status, "stopped", "workers.stop must mark the worker stopped");
      equal(
        await ctx.backend.workers.heartbeat(reg.id, null),
        false,
        "heartbeat of a stopped worker must return false",
      );
      equal(
        await ctx.backend.workers.heartbeat(ctx.id(), null),
        false,
        "heartbeat of an unknown worker must return false",
      );
    },
  }),
  defineCase({
    id: "workers/heartbeat-moves-forward",
    title:
      "a heartbeat moves last_heartbeat to now (strictly later than before), so recovery leaves the worker alone",
    requires: { inspector: ["backdateWorkerHeartbeat"] },
    async run(ctx) {
      const reg = registration(ctx);
      await ctx.backend.workers.register(reg);
      await ctx.inspector.backdateWorkerHeartbeat(reg.id, 600_000);
      const before = (await listed(ctx, reg.id))?.lastHeartbeat.getTime() ?? Number.NaN;
      near(new Date(before), Date.now() - 600_000, 60_000, "lastHeartbeat after backdating it 10 min");
      equal(
        await ctx.backend.workers.heartbeat(reg.id, null),
        true,
        "heartbeat of an active worker must return true",
      );
      const after = (await listed(ctx, reg.id))?.lastHeartbeat;
      assert.ok(
        after !== undefined && after.getTime() > before,
        `heartbeat must move last_heartbeat forward: it was ${new Date(before).toISOString()}, is ${after?.toISOString()}`,
      );
      near(after, Date.now(), 60_000, "lastHeartbeat after a heartbeat must be now");
      const recovery = await ctx.backend.workers.recoverStale(300_000);
      assert.ok(
        !recovery.workerIds.includes(reg.id),
        "a worker that just heartbeat must not be declared stale at a 5 min threshold",
      );
      equal((await listed(ctx, reg.id))?.status, "active", "the heartbeating worker must stay active");
    },
  }),
  defineCase({
    id: "workers/stale-recovery-requeues-only-stale-workers-jobs",
    title:
      "recoverStale stops workers older than the threshold and requeues the processing jobs of stale and stopped workers only",
    requires: { inspector: ["backdateWorkerHeartbeat"] },
    async run(ctx) {
      const stale = registration(ctx);
      const live = registration(ctx);
      const stopped = registration(ctx);
      for (const w of [stale, live, stopped]) await ctx.backend.workers.register(w);
      const queue = ctx.queue();
      const lost = await enqueue(ctx, { queue });
      const lostClaim = await claimOne(ctx, queue, stale.id);
      const kept = await enqueue(ctx, { queue });
      await claimOne(ctx, queue, live.id);
      const held = await enqueue(ctx, { queue });
      await claimOne(ctx, queue, stopped.id);
      await ctx.backend.workers.stop(stopped.id);
      const unowned = await enqueue(ctx, { queue });
      await claimOne(ctx, queue, null);
      await ctx.inspector.backdateWorkerHeartbeat(stale.id, 600_000);
      const recovery = await ctx.backend.workers.recoverStale(300_000);
      assert.ok(
        recovery.workerIds.includes(stale.id),
        "the worker silent for 10 min must be declared stale at 5 min",
      );
      for (const w of [live, stopped]) {
        assert.ok(
          !recovery.workerIds.includes(w.id),
          "only active workers silent past the threshold are declared stale",
        );
      }
      for (const [what, job] of [
        ["the stale worker's job", lost],
        ["the stopped worker's job", held],
      ] as const) {
        assert.ok(recovery.requeuedJobIds.includes(job.id), `${what} must be reported requeued`);
        const row = await ctx.backend.jobs.get(job.id);
        equal(row?.status, "queued", `${what} must be queued again`);
        equal(row?.workerId, null, `recovery must clear the worker id of ${what}`);
      }
      equal(
        (await ctx.backend.jobs.get(lost.id))?.attempts,
        lostClaim.attempts,
        "recovery must keep attempts",
      );
      for (const [what, job] of [
        ["the live worker's job", kept],
        ["a job claimed without a worker id", unowned],
      ] as const) {
        assert.ok(!recovery.requeuedJobIds.includes(job.id), `${what} must not be requeued`);
        equal(await statusOf(ctx, job.id), "processing", `${what} must stay processing`);
      }
      equal(
        await ctx.backend.workers.heartbeat(stale.id, null),
        false,
        "the stale worker's next heartbeat must fail",
      );
      equal(
        await ctx.backend.workers.heartbeat(live.id, null),
        true,
        "the live worker's heartbeat must succeed",
      );
      deepEqual(
        await ctx.backend.runs.settle([done(lostClaim)]),
        [false],
        "the stale worker's late completion must not apply",
      );
      const again = await ctx.backend.workers.recoverStale(300_000);
      for (const job of [lost, held, kept, unowned]) {
        assert.ok(
          !again.requeuedJobIds.includes(job.id),
          "a second recovery must not requeue these jobs again",
        );
      }
    },
  }),
  defineCase({
    id: "workers/expired-done-rows-deleted",
    title: "jobs.deleteExpired deletes done rows whose result TTL passed and keeps the others",
    async run(ctx) {
      const short = await processingJob(ctx);
      const long = await processingJob(ctx);
      await settleOne(ctx, done(short, 1, 1), "completing with a 1 ms TTL");
      await settleOne(ctx, done(long, 2, 3_600_000), "completing with a 1 h TTL");
      await eventually(
        async () => {
          await ctx.backend.jobs.deleteExpired();
          equal(
            await ctx.backend.jobs.get(short.id),
            null,
            "a done row with a 1 ms TTL must be deleted once expired",
          );
        },
        { timeoutMs: 5000, intervalMs: 20 },
      );
      equal(await statusOf(ctx, long.id), "done", "a done row with a 1 h TTL must be kept");
      const queued = await enqueue(ctx, { queue: ctx.queue() });
      await ctx.backend.jobs.deleteExpired();
      notEqual(
        await ctx.backend.jobs.get(queued.id),
        null,
        "deleteExpired must never delete unfinished jobs",
      );
    },
  }),
  defineCase({
    id: "workers/processing-lists-the-workers-jobs",
    title:
      "workers.processing lists the jobs processing under that worker with their attempts, and no other worker's, queued or settled job",
    async run(ctx) {
      const queue = ctx.queue("held");
      const a = registration(ctx, { queues: [queue] });
      const b = registration(ctx, { queues: [queue] });
      await ctx.backend.workers.register(a);
      await ctx.backend.workers.register(b);
      deepEqual(
        await ctx.backend.workers.processing(a.id),
        [],
        "a worker that claimed nothing processes nothing",
      );
      for (let i = 0; i < 4; i++) await enqueue(ctx, { queue });
      const first = await claimOne(ctx, queue, a.id);
      const second = await claimOne(ctx, queue, a.id);
      const others = await claimOne(ctx, queue, b.id);
      const byId = (rows: { id: string; attempts: number }[]) =>
        [...rows].sort((x, y) => (x.id < y.id ? -1 : 1));
      deepEqual(
        byId(await ctx.backend.workers.processing(a.id)),
        byId([first, second].map((j) => ({ id: j.id, attempts: j.attempts }))),
        "workers.processing must list exactly the worker's processing jobs, each with the attempts its claim gave it",
      );
      await settleOne(ctx, done(first), "completing the first job");
      deepEqual(
        await ctx.backend.workers.processing(a.id),
        [{ id: second.id, attempts: second.attempts }],
        "a settled job is no longer processing under its worker",
      );
      deepEqual(
        await ctx.backend.workers.processing(b.id),
        [{ id: others.id, attempts: others.attempts }],
        "another worker's list holds only its own job",
      );
    },
  }),
  defineCase({
    id: "workers/task-names",
    title: "registerTaskNames records which worker serves which task name, listed by task name",
    async run(ctx) {
      const reg = registration(ctx);
      await ctx.backend.workers.register(reg);
      await ctx.backend.workers.registerTaskNames(reg.id, [
        { name: "conformance.b", version: null },
        { name: "conformance.a", version: null },
      ]);
      await ctx.backend.workers.registerTaskNames(reg.id, [{ name: "conformance.a", version: null }]);
      const mine = (await ctx.backend.workers.listTaskNames()).filter((t) => t.workerId === reg.id);
      deepEqual(
        mine.map((t) => t.taskName),
        ["conformance.a", "conformance.b"],
        "each task name once, ordered by task name",
      );
      for (const t of mine) near(t.lastSeenAt, Date.now(), 60_000, "lastSeenAt");
    },
  }),
];
