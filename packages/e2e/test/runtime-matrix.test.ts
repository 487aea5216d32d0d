/**
 * The same app scenarios on every backend: memory, SQLite (a temp file per test) and PostgreSQL (one
 * database for this file, a fresh queue per test). Each scenario goes through the public API only.
 */
import { randomUUID } from "node:crypto";
import { type JobAbortedError, snooze } from "@soniq/core";
import { describe, expect, it } from "vitest";
import {
  ALL_KINDS,
  eventually,
  expectStaleThenReregistered,
  gate,
  matrixHarness,
} from "./runtime-support.js";

describe.each(ALL_KINDS.map((make) => [make().name, make] as const))(
  "runtime/matrix on %s",
  (_name, make) => {
    const t = matrixHarness(make);
    const { kind, app, started } = t;

    it("runtime/matrix-lifecycle: enqueue -> run -> retry -> dead letter -> replay -> done", async () => {
      const soniq = await app();
      let failing = true;
      let runs = 0;
      const job = soniq.job(
        "matrix.flaky",
        async (args: { n: number }) => {
          runs++;
          if (failing) throw new Error("service down");
          return { ok: args.n };
        },
        { queue: t.queue, maxAttempts: 2, retry: { delaysMs: [0] } },
      );
      const { id } = await job.enqueue({ n: 7 });
      await started(soniq.worker({ queues: [t.queue], pollIntervalMs: 50 }));
      const dead = await eventually(async () => {
        const row = await soniq.deadLetters.get(id);
        expect(row).toMatchObject({ deadLetterReason: "max_retries_exceeded", attempts: 2 });
        return row;
      });
      expect(dead?.lastError).toContain("Error: service down");
      expect(runs).toBe(2);
      expect(await soniq.jobs.get(id)).toBeNull();
      expect((await soniq.jobs.stats({ queue: t.queue })).dead_letter).toBe(1);

      failing = false;
      const newId = await soniq.deadLetters.replay(id);
      expect(newId).not.toBe(id);
      await eventually(async () => expect((await soniq.jobs.get(newId as string))?.status).toBe("done"));
      expect((await soniq.jobs.get(newId as string))?.result ?? null).toEqual({ ok: 7 });
      expect((await soniq.deadLetters.get(id))?.resurrectionCount).toBe(1);
      const stats = await soniq.jobs.stats({ queue: t.queue });
      expect(stats).toMatchObject({ done: 1, dead_letter: 1, queued: 0, processing: 0 });
    });

    it("runtime/matrix-cancel-running: the handler's signal aborts and its late result is ignored", async () => {
      const soniq = await app();
      const running = gate();
      let reason: unknown;
      const job = soniq.job(
        "matrix.cancel",
        (_args, ctx) =>
          new Promise((resolve) => {
            running.open();
            ctx.signal.addEventListener("abort", () => {
              reason = ctx.signal.reason;
              resolve("too late");
            });
          }),
        { queue: t.queue },
      );
      const { id } = await job.enqueue({});
      const worker = await started(soniq.worker({ queues: [t.queue], pollIntervalMs: 50 }));
      await running.promise;
      expect(await soniq.jobs.cancel(id)).toBe(true);
      expect((reason as JobAbortedError).why).toBe("cancelled");
      await worker.stop();
      expect(await soniq.jobs.get(id)).toMatchObject({ status: "cancelled", result: null });
    });

    it("runtime/matrix-cancel-from-peer: a cancel through another instance reaches the handler at the next heartbeat", async () => {
      const soniqA = await app();
      const soniqB = await app(kind.createPeer());
      const running = gate();
      const aborted = gate<unknown>();
      const job = soniqA.job(
        "matrix.cancel_remote",
        (_args, ctx) =>
          new Promise((resolve) => {
            running.open();
            ctx.signal.addEventListener("abort", () => {
              aborted.open(ctx.signal.reason);
              resolve("too late");
            });
          }),
        { queue: t.queue },
      );
      const { id } = await job.enqueue({});
      await started(soniqA.worker({ queues: [t.queue], pollIntervalMs: 50, heartbeatIntervalMs: 50 }));
      await running.promise;
      expect(await soniqB.backend.jobs.cancel(id)).toBe(true);
      expect(((await aborted.promise) as JobAbortedError).why).toBe("cancelled");
      expect((await soniqA.jobs.get(id))?.status).toBe("cancelled");
    });

    it("runtime/matrix-declared-stale: a worker whose heartbeat is refused re-registers and keeps working", async () => {
      const soniq = await app();
      const job = soniq.job("matrix.after_stale", async () => "still working", { queue: t.queue });
      const worker = await started(
        soniq.worker({ queues: [t.queue], pollIntervalMs: 50, heartbeatIntervalMs: 30 }),
      );
      await expectStaleThenReregistered(soniq, worker);
      const { id } = await job.enqueue({});
      await eventually(async () => expect((await soniq.jobs.get(id))?.result ?? null).toBe("still working"));
    });

    it("runtime/matrix-timeout: a handler over timeoutMs fails its attempt with 'timed out'", async () => {
      const soniq = await app();
      const job = soniq.job("matrix.slow", () => new Promise(() => {}), {
        queue: t.queue,
        timeoutMs: 50,
        maxAttempts: 1,
      });
      const { id } = await job.enqueue({});
      await started(soniq.worker({ queues: [t.queue], pollIntervalMs: 50 }));
      const dead = await eventually(async () => {
        const row = await soniq.deadLetters.get(id);
        expect(row).not.toBeNull();
        return row;
      });
      expect(dead).toMatchObject({ deadLetterReason: "max_retries_exceeded", attempts: 1 });
      expect(dead?.lastError).toContain("timed out after 50 ms");
    });

    it("runtime/matrix-graceful-stop: stop waits for the in-flight job, then the worker row is stopped", async () => {
      const soniq = await app();
      const running = gate();
      const release = gate();
      const job = soniq.job(
        "matrix.inflight",
        async () => {
          running.open();
          await release.promise;
          return "finished";
        },
        { queue: t.queue },
      );
      const { id } = await job.enqueue({});
      const worker = await started(soniq.worker({ queues: [t.queue], pollIntervalMs: 50 }));
      await running.promise;
      const stopping = worker.stop();
      release.open();
      await stopping;
      expect(await soniq.jobs.get(id)).toMatchObject({ status: "done", result: "finished" });
      const row = (await soniq.backend.workers.list()).find((w) => w.id === worker.id);
      expect(row?.status).toBe("stopped");
    });

    it("runtime/matrix-shutdown-timeout: a job still running at the deadline is given back, attempt kept", async () => {
      const soniq = await app();
      const running = gate();
      const job = soniq.job(
        "matrix.stubborn",
        async () => {
          running.open();
          await new Promise(() => {});
        },
        { queue: t.queue },
      );
      const { id } = await job.enqueue({});
      const worker = await started(
        soniq.worker({ queues: [t.queue], pollIntervalMs: 50, shutdownTimeoutMs: 50 }),
      );
      await running.promise;
      await worker.stop();
      expect(await soniq.jobs.get(id)).toMatchObject({ status: "queued", attempts: 1 });
    });

    it("runtime/matrix-mixed-settle-batch: retries, dead letters (one with a NUL in its error), snoozes and results settle together", async () => {
      const soniq = await app();
      let snoozes = 0;
      const job = soniq.job(
        "matrix.mixed",
        async (args: { k: string }, ctx) => {
          if (args.k === "retry" && ctx.attempt === 1) throw new Error("again");
          if (args.k === "dead") throw new Error("nul\u0000inside");
          if (args.k === "snooze" && snoozes++ === 0) return snooze(0, "wait");
          return args.k;
        },
        { queue: t.queue, maxAttempts: 2, retry: { delaysMs: [0] } },
      );
      const kinds = ["done", "retry", "dead", "snooze"];
      const ids = (await soniq.jobs.enqueueMany(kinds.map((k) => ({ job, args: { k } })))).map((r) => r.id);
      await soniq.worker({ queues: [t.queue], concurrency: 4 }).runOnce();
      const [done, retried, dead, snoozed] = ids as [string, string, string, string];
      expect(await soniq.jobs.get(done)).toMatchObject({ status: "done", result: "done", attempts: 1 });
      expect(await soniq.jobs.get(retried)).toMatchObject({
        status: "done",
        attempts: 2,
        lastError: expect.stringContaining("Error: again"),
      });
      expect(await soniq.jobs.get(snoozed)).toMatchObject({
        status: "done",
        attempts: 1,
        lastError: "SNOOZE: wait",
      });
      const row = await soniq.deadLetters.get(dead);
      expect(row).toMatchObject({ deadLetterReason: "max_retries_exceeded", attempts: 2 });
      expect(row?.lastError).toContain("Error: nul\ufffdinside");
    });

    it("runtime/matrix-claimed-past-attempts: a job whose runs never settled is dead-lettered unrun", async () => {
      const soniq = await app();
      let ran = 0;
      const job = soniq.job("matrix.crashy", async () => ++ran, { queue: t.queue, maxAttempts: 1 });
      const { id } = await job.enqueue({});
      // A worker claims it (attempt 1) and stops without settling; recovery requeues it, attempt spent.
      const ghost = {
        id: randomUUID(),
        hostname: "ghost",
        pid: 1,
        queues: [t.queue],
        concurrency: 1,
        version: null,
        metadata: null,
      };
      await soniq.backend.workers.register(ghost);
      expect(
        (await soniq.backend.runs.claim({ queues: [t.queue], limit: 1, workerId: ghost.id })).jobs,
      ).toHaveLength(1);
      await soniq.backend.workers.stop(ghost.id);
      expect((await soniq.backend.workers.recoverStale(60_000)).requeuedJobIds).toContain(id);
      expect(await soniq.worker({ queues: [t.queue] }).runOnce()).toBe(0);
      expect(ran).toBe(0);
      expect(await soniq.jobs.get(id)).toBeNull();
      expect(await soniq.deadLetters.get(id)).toMatchObject({
        deadLetterReason: "max_retries_exceeded",
        attempts: 2,
      });
    });

    it("runtime/matrix-dead-worker-recovered: a worker that dies mid-job loses it to a peer after the stale threshold", async () => {
      // A maintenance worker on another queue declares workers stale after 300 ms.
      const { a, soniqA, soniqB, hung } = await t.dyingPair("matrix.recover");
      const workerA = await started(
        soniqA.worker({ queues: [t.queue], pollIntervalMs: 50, shutdownTimeoutMs: 10 }),
      );
      const { id } = await soniqA.jobs.enqueue("matrix.recover", {});
      await hung.promise;
      a.kill(); // from here on worker A never reaches storage again: no heartbeat, no claim, no write
      await started(soniqB.worker({ queues: [t.queue], pollIntervalMs: 50, heartbeatIntervalMs: 50 }));
      await eventually(async () => {
        expect(await soniqB.jobs.get(id)).toMatchObject({ status: "done", result: "recovered on attempt 2" });
      }, 10_000);
      const rowA = (await soniqB.backend.workers.list()).find((w) => w.id === workerA.id);
      expect(rowA?.status).toBe("stopped");
    }, 20_000);
  },
);
