/**
 * `runOnce` leaves no job without an owner that recovery reaches, on every backend: it claims under a
 * registered worker row (heartbeating while it runs, stopped when it returns), so a run whose process dies
 * or whose outcome cannot be written is requeued by stale-worker recovery like any worker's, and it runs one
 * recovery pass itself before it claims, so a deployment of runOnce calls alone recovers too. The SIGKILL
 * version (a real process) is in runtime-process-kill.test.ts.
 */
import type { Handler, Soniq, Worker } from "@soniq/core";
import { describe, expect, it } from "vitest";
import { ALL_KINDS, type DyingPair, eventually, killable, matrixHarness } from "./runtime-support.js";

describe.each(ALL_KINDS.map((make) => [make().name, make] as const))(
  "runtime/run-once on %s",
  (_name, make) => {
    const t = matrixHarness(make);
    const { kind, app, started } = t;

    async function workerRow(soniq: Soniq, id: string) {
      return (await soniq.backend.workers.list()).find((w) => w.id === id);
    }

    /** A Soniq on a killable backend with one queued job (`handler` runs it); `failing` calls fail from the start. */
    async function oneQueuedJob(name: string, handler: Handler<unknown, unknown>, failing: string) {
      const a = killable(kind.create());
      const soniq = await app(a.backend);
      const { id } = await soniq.job(name, handler, { queue: t.queue }).enqueue({});
      a.failing.add(failing);
      return { a, soniq, id, worker: () => soniq.worker({ queues: [t.queue] }) };
    }

    /** A runOnce on A, hanging in the pair's job (stopped, A revived, after the test). */
    async function hungRunOnce({ a, soniqA, hung }: DyingPair): Promise<Worker> {
      const once = soniqA.worker({ queues: [t.queue], heartbeatIntervalMs: 50, shutdownTimeoutMs: 10 });
      const running = once.runOnce();
      t.defer(async () => {
        a.revive();
        await once.stop();
        await running;
      });
      await hung.promise;
      return once;
    }

    it("runtime/run-once-dies-mid-job: the job of a runOnce whose process died is recovered by a peer", async () => {
      const pair = await t.dyingPair("once.dies");
      const { soniqB } = pair;
      const { id } = await pair.soniqA.jobs.enqueue("once.dies", {});
      const once = await hungRunOnce(pair);
      expect(await soniqB.jobs.get(id)).toMatchObject({ status: "processing", workerId: once.id });
      expect((await workerRow(soniqB, once.id))?.status).toBe("active");
      pair.a.kill(); // from here on the runOnce process never reaches storage again

      await started(soniqB.worker({ queues: [t.queue], pollIntervalMs: 50, heartbeatIntervalMs: 50 }));
      await eventually(async () => {
        expect(await soniqB.jobs.get(id)).toMatchObject({ status: "done", result: "recovered on attempt 2" });
      }, 10_000);
      expect((await workerRow(soniqB, once.id))?.status).toBe("stopped");
    }, 30_000);

    it("runtime/run-once-recovers-stale: with no started worker anywhere, the next runOnce recovers the job of a runOnce that died, once it is stale", async () => {
      const pair = await t.dyingPair("once.stranded", { keeper: false });
      const { soniqB } = pair;
      const { id } = await pair.soniqA.jobs.enqueue("once.stranded", {});
      const dying = await hungRunOnce(pair);
      pair.a.kill(); // the process (and its storage connection) is gone mid-job; nothing else runs maintenance

      const staleAfterMs = 2000;
      const next = () =>
        soniqB.worker({ queues: [t.queue], heartbeatIntervalMs: 50, staleAfterMs }).runOnce();
      // Not stale yet: the job stays with its (dead) owner; running it now could run it twice.
      expect(await next()).toBe(0);
      expect(await soniqB.jobs.get(id)).toMatchObject({ status: "processing", workerId: dying.id });
      const lastBeat = (await workerRow(soniqB, dying.id))?.lastHeartbeat.getTime() ?? Number.NaN;
      await eventually(() => expect(Date.now() - lastBeat).toBeGreaterThan(staleAfterMs + 100), 10_000);
      expect(await next()).toBe(1);
      expect(await soniqB.jobs.get(id)).toMatchObject({ status: "done", result: "recovered on attempt 2" });
      expect((await workerRow(soniqB, dying.id))?.status).toBe("stopped");
    }, 30_000);

    it("runtime/run-once-recovery-fails: a failed recovery pass is reported and runOnce still runs what is due", async () => {
      const { soniq, id, worker } = await oneQueuedJob("once.due", async () => "ran", "workers.recoverStale");
      const once = worker();
      const errors: string[] = [];
      once.on("error", ({ during }) => errors.push(during));
      expect(await once.runOnce()).toBe(1);
      expect(errors).toEqual(["stale recovery"]);
      expect(await soniq.jobs.get(id)).toMatchObject({ status: "done", result: "ran" });
    }, 30_000);

    it("runtime/run-once-write-fails: runOnce still returns its count; the unwritten job is left under a stopped worker, and recovery requeues it", async () => {
      const { a, soniq, id, worker } = await oneQueuedJob(
        "once.unwritten",
        async (_args, ctx) => `done on attempt ${ctx.attempt}`,
        "runs.settle",
      );
      const once = worker();
      expect(await once.runOnce()).toBe(1);
      expect(await soniq.jobs.get(id)).toMatchObject({ status: "processing", workerId: once.id });
      expect((await workerRow(soniq, once.id))?.status).toBe("stopped");

      const recovery = await soniq.backend.workers.recoverStale(3_600_000);
      expect(recovery.requeuedJobIds).toContain(id);
      a.failing.delete("runs.settle");
      expect(await worker().runOnce()).toBe(1);
      expect(await soniq.jobs.get(id)).toMatchObject({ status: "done", result: "done on attempt 2" });
    }, 30_000);

    it("runtime/run-once-write-heals: a give-back that failed during the run is retried before runOnce returns", async () => {
      const { a, soniq, id, worker } = await oneQueuedJob(
        "once.healed",
        async () => "lost result",
        "runs.settle",
      );
      const once = worker();
      let settleErrors = 0;
      once.on("error", ({ during }) => {
        // The outcome's write and then the give-back's have failed: storage comes back.
        if (during === "settle" && ++settleErrors === 2) a.failing.delete("runs.settle");
      });
      expect(await once.runOnce()).toBe(1);
      expect(settleErrors).toBe(2);
      expect(await soniq.jobs.get(id)).toMatchObject({ status: "queued", attempts: 1, workerId: null });
      expect((await workerRow(soniq, once.id))?.status).toBe("stopped");
    }, 30_000);
  },
);
