/**
 * `runOnce` leaves no job without an owner that recovery reaches, on every backend: it claims under a
 * registered worker row (heartbeating while it runs, stopped when it returns), so a run whose process dies
 * or whose outcome cannot be written is requeued by stale-worker recovery like any worker's, and it runs one
 * recovery pass itself before it claims, so a deployment of runOnce calls alone recovers too. The SIGKILL
 * version (a real process) is in runtime-process-kill.test.ts.
 */
import type { Soniq } from "@soniq/core";
import { describe, expect, it } from "vitest";
import { ALL_KINDS, eventually, gate, killable, matrixHarness } from "./runtime-support.js";

describe.each(ALL_KINDS.map((make) => [make().name, make] as const))(
  "runtime/run-once on %s",
  (_name, make) => {
    const t = matrixHarness(make);
    const { kind, app, started } = t;

    async function workerRow(soniq: Soniq, id: string) {
      return (await soniq.backend.workers.list()).find((w) => w.id === id);
    }

    it("runtime/run-once-dies-mid-job: the job of a runOnce whose process died is recovered by a peer", async () => {
      const { a, soniqA, soniqB, hung } = await t.dyingPair("once.dies");
      const { id } = await soniqA.enqueue("once.dies", {});
      const once = soniqA.worker({ queues: [t.queue], heartbeatIntervalMs: 50, shutdownTimeoutMs: 10 });
      const running = once.runOnce();
      t.defer(async () => {
        a.revive();
        await once.stop();
        await running;
      });
      await hung.promise;
      expect(await soniqB.getJob(id)).toMatchObject({ status: "processing", workerId: once.id });
      expect((await workerRow(soniqB, once.id))?.status).toBe("active");
      a.kill(); // from here on the runOnce process never reaches storage again

      await started(soniqB.worker({ queues: [t.queue], pollIntervalMs: 50, heartbeatIntervalMs: 50 }));
      await eventually(async () => {
        expect(await soniqB.getJob(id)).toMatchObject({ status: "done", result: "recovered on attempt 2" });
      }, 10_000);
      expect((await workerRow(soniqB, once.id))?.status).toBe("stopped");
    }, 30_000);

    it("runtime/run-once-recovers-stale: with no started worker anywhere, the next runOnce recovers the job of a runOnce that died, once it is stale", async () => {
      const a = killable(kind.create());
      const soniqA = await app(a.backend);
      const soniqB = await app(kind.createPeer());
      const hung = gate();
      soniqA.job(
        "once.stranded",
        () => {
          hung.open();
          return new Promise(() => {});
        },
        { queue: t.queue },
      );
      soniqB.job("once.stranded", async (_args, ctx) => `recovered on attempt ${ctx.attempt}`, {
        queue: t.queue,
      });
      const { id } = await soniqA.enqueue("once.stranded", {});
      const dying = soniqA.worker({ queues: [t.queue], heartbeatIntervalMs: 50, shutdownTimeoutMs: 10 });
      const running = dying.runOnce();
      t.defer(async () => {
        a.revive();
        await dying.stop();
        await running;
      });
      await hung.promise;
      a.kill(); // the process (and its storage connection) is gone mid-job; nothing else runs maintenance

      const staleAfterMs = 2000;
      const next = () =>
        soniqB.worker({ queues: [t.queue], heartbeatIntervalMs: 50, staleAfterMs }).runOnce();
      // Not stale yet: the job stays with its (dead) owner; running it now could run it twice.
      expect(await next()).toBe(0);
      expect(await soniqB.getJob(id)).toMatchObject({ status: "processing", workerId: dying.id });
      const lastBeat = (await workerRow(soniqB, dying.id))?.lastHeartbeat.getTime() ?? Number.NaN;
      await eventually(() => expect(Date.now() - lastBeat).toBeGreaterThan(staleAfterMs + 100), 10_000);
      expect(await next()).toBe(1);
      expect(await soniqB.getJob(id)).toMatchObject({ status: "done", result: "recovered on attempt 2" });
      expect((await workerRow(soniqB, dying.id))?.status).toBe("stopped");
    }, 30_000);

    it("runtime/run-once-recovery-fails: a failed recovery pass is reported and runOnce still runs what is due", async () => {
      const a = killable(kind.create());
      const soniq = await app(a.backend);
      const job = soniq.job("once.due", async () => "ran", { queue: t.queue });
      const { id } = await job.enqueue({});
      a.failing.add("workers.recoverStale");
      const once = soniq.worker({ queues: [t.queue] });
      const errors: string[] = [];
      once.on("error", ({ during }) => errors.push(during));
      expect(await once.runOnce()).toBe(1);
      expect(errors).toEqual(["stale recovery"]);
      expect(await soniq.getJob(id)).toMatchObject({ status: "done", result: "ran" });
    }, 30_000);

    it("runtime/run-once-write-fails: runOnce still returns its count; the unwritten job is left under a stopped worker, and recovery requeues it", async () => {
      const a = killable(kind.create());
      const soniq = await app(a.backend);
      const job = soniq.job("once.unwritten", async (_args, ctx) => `done on attempt ${ctx.attempt}`, {
        queue: t.queue,
      });
      const { id } = await job.enqueue({});
      a.failing.add("runs.settle");
      const once = soniq.worker({ queues: [t.queue] });
      expect(await once.runOnce()).toBe(1);
      expect(await soniq.getJob(id)).toMatchObject({ status: "processing", workerId: once.id });
      expect((await workerRow(soniq, once.id))?.status).toBe("stopped");

      const recovery = await soniq.backend.workers.recoverStale(3_600_000);
      expect(recovery.requeuedJobIds).toContain(id);
      a.failing.delete("runs.settle");
      expect(await soniq.worker({ queues: [t.queue] }).runOnce()).toBe(1);
      expect(await soniq.getJob(id)).toMatchObject({ status: "done", result: "done on attempt 2" });
    }, 30_000);

    it("runtime/run-once-write-heals: a give-back that failed during the run is retried before runOnce returns", async () => {
      const a = killable(kind.create());
      const soniq = await app(a.backend);
      const job = soniq.job("once.healed", async () => "lost result", { queue: t.queue });
      const { id } = await job.enqueue({});
      a.failing.add("runs.settle");
      const once = soniq.worker({ queues: [t.queue] });
      let settleErrors = 0;
      once.on("error", ({ during }) => {
        // The outcome's write and then the give-back's have failed: storage comes back.
        if (during === "settle" && ++settleErrors === 2) a.failing.delete("runs.settle");
      });
      expect(await once.runOnce()).toBe(1);
      expect(settleErrors).toBe(2);
      expect(await soniq.getJob(id)).toMatchObject({ status: "queued", attempts: 1, workerId: null });
      expect((await workerRow(soniq, once.id))?.status).toBe("stopped");
    }, 30_000);
  },
);
