/** soniq.jobs.explain(id) on the memory backend: every code, each produced by setting up its cause. */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { WorkerRegistration } from "../src/contract/index.js";
import { EXPLAIN_CODES, type Explanation } from "../src/jobs/explain.js";
import { PermanentError } from "../src/jobs/outcomes.js";
import { memoryApps } from "./memory.js";

const app = memoryApps();
const codes = (e: Explanation) => e.reasons.map((r) => r.code);
const worker = (queues: string[] = []): WorkerRegistration => ({
  id: randomUUID(),
  hostname: "host-1",
  pid: 42,
  queues,
  concurrency: 4,
  version: null,
  metadata: null,
});

/** A Soniq with one live worker registered for `queues` that holds a handler for `names`. */
async function withLiveWorker(queues: string[], names: string[]) {
  const soniq = app({ allowUnknownJobNames: true });
  const w = worker(queues);
  await soniq.backend.workers.register(w);
  await soniq.backend.workers.registerTaskNames(
    w.id,
    names.map((name) => ({ name, version: null })),
  );
  return { soniq, workerId: w.id };
}

describe("explain", () => {
  const seen = new Set<string>();
  const record = (e: Explanation) => {
    for (const c of codes(e)) seen.add(c);
    return e;
  };

  it("explain/not-found: an unknown or malformed id is not_found with status null, no throw", async () => {
    const soniq = app();
    for (const id of [randomUUID(), "not-a-uuid"]) {
      const e = record(await soniq.jobs.explain(id));
      expect(e).toMatchObject({ status: null, verdict: "not_found" });
      expect(codes(e)).toEqual(["not_found"]);
    }
  });

  it("explain/terminal: done, cancelled and dead_lettered (with reason and last error)", async () => {
    const soniq = app();
    soniq.job("t.ok", async () => 1);
    soniq.job("t.bad", async () => {
      throw new PermanentError("nope");
    });
    const ok = await soniq.jobs.enqueue("t.ok", {});
    const bad = await soniq.jobs.enqueue("t.bad", {});
    await soniq.worker().runOnce();
    expect(record(await soniq.jobs.explain(ok.id))).toMatchObject({ status: "done", verdict: "done" });
    const dead = record(await soniq.jobs.explain(bad.id));
    expect(dead).toMatchObject({ status: "dead_letter", verdict: "dead_lettered" });
    expect(dead.reasons[0]?.evidence).toMatchObject({ reason: "permanent_failure" });
    expect(String(dead.reasons[0]?.evidence.lastError)).toContain("nope");
    const gone = await soniq.jobs.enqueue("t.ok", {}, { delayMs: 60_000 });
    await soniq.jobs.cancel(gone.id);
    expect(codes(record(await soniq.jobs.explain(gone.id)))).toEqual(["cancelled"]);
  });

  it("explain/running-and-stale: running names the worker; a stopped holder is held_by_stale_worker", async () => {
    const { soniq, workerId } = await withLiveWorker([], ["r.job"]);
    const { id } = await soniq.jobs.enqueue("r.job", {}, {});
    await soniq.backend.runs.claim({ queues: null, limit: 1, workerId });
    const running = record(await soniq.jobs.explain(id));
    expect(running).toMatchObject({ status: "processing", verdict: "running" });
    expect(running.reasons[0]?.evidence).toMatchObject({ workerId, hostname: "host-1", pid: 42 });
    await soniq.backend.workers.stop(workerId);
    const stuck = record(await soniq.jobs.explain(id));
    expect(stuck.verdict).toBe("stuck");
    expect(codes(stuck)).toEqual(["running", "held_by_stale_worker"]);
  });

  it("explain/not-due: scheduled_in_future for a delayed job, retry_backoff for a failed one", async () => {
    const { soniq } = await withLiveWorker([], ["d.job", "d.fail"]);
    soniq.job(
      "d.fail",
      async () => {
        throw new Error("flaky");
      },
      { maxAttempts: 3, retry: { backoff: "fixed", delayMs: 60_000 } },
    );
    const later = await soniq.jobs.enqueue("d.job", {}, { delayMs: 60_000 });
    const e = record(await soniq.jobs.explain(later.id));
    expect(e.verdict).toBe("scheduled");
    expect(codes(e)).toContain("scheduled_in_future");
    const failing = await soniq.jobs.enqueue("d.fail", {});
    await soniq.worker({ queues: ["default"] }).runOnce();
    const backoff = record(await soniq.jobs.explain(failing.id));
    expect(codes(backoff)).toContain("retry_backoff");
    expect(backoff.reasons.find((r) => r.code === "retry_backoff")?.evidence).toMatchObject({
      attempt: 2,
      maxAttempts: 3,
    });
  });

  it("explain/controls: queue_paused, queue_concurrency_full, group_concurrency_full and rate_limited", async () => {
    const { soniq } = await withLiveWorker([], ["c.job"]);
    const claimFrom = (queue: string, limit: number) =>
      soniq.backend.runs.claim({ queues: [queue], limit, workerId: null });
    await soniq.queues.pause("paused", { create: true });
    const p = await soniq.jobs.enqueue("c.job", {}, { queue: "paused" });
    expect(codes(record(await soniq.jobs.explain(p.id)))).toContain("queue_paused");

    await soniq.queues.configure("full", { concurrency: 1 }, { create: true });
    await soniq.jobs.enqueue("c.job", {}, { queue: "full" });
    const waiting = await soniq.jobs.enqueue("c.job", {}, { queue: "full" });
    await claimFrom("full", 5);
    const full = record(await soniq.jobs.explain(waiting.id));
    expect(full.verdict).toBe("blocked");
    expect(full.reasons.find((r) => r.code === "queue_concurrency_full")?.evidence).toMatchObject({
      concurrency: 1,
      processing: 1,
    });

    await soniq.queues.configure("groups", { groupConcurrency: 1 }, { create: true });
    await soniq.jobs.enqueue("c.job", {}, { queue: "groups", group: "t1" });
    const grouped = await soniq.jobs.enqueue("c.job", {}, { queue: "groups", group: "t1" });
    await claimFrom("groups", 5);
    expect(codes(record(await soniq.jobs.explain(grouped.id)))).toContain("group_concurrency_full");

    await soniq.queues.configure("rated", { rateLimit: { max: 1, perMs: 60_000 } }, { create: true });
    await soniq.jobs.enqueue("c.job", {}, { queue: "rated" });
    const rated = await soniq.jobs.enqueue("c.job", {}, { queue: "rated" });
    await claimFrom("rated", 5);
    const limited = record(await soniq.jobs.explain(rated.id));
    expect(limited.reasons.find((r) => r.code === "rate_limited")?.evidence.until).toBeInstanceOf(Date);
  });

  it("explain/nobody-to-run-it: no_worker_for_queue and no_handler_for_job, gone once a worker serves it", async () => {
    const soniq = app();
    soniq.job("n.job", async () => null, { queue: "lonely" });
    const { id } = await soniq.jobs.enqueue("n.job", {});
    expect(codes(record(await soniq.jobs.explain(id)))).toEqual([
      "no_worker_for_queue",
      "no_handler_for_job",
    ]);
    const w = worker(["lonely"]);
    await soniq.backend.workers.register(w);
    expect(codes(await soniq.jobs.explain(id))).toEqual(["no_handler_for_job"]);
    await soniq.backend.workers.registerTaskNames(w.id, [{ name: "n.job", version: null }]);
    expect(await soniq.jobs.explain(id)).toMatchObject({ status: "queued", verdict: "ready", reasons: [] });
  });

  it("explain/waiting-behind: counts the ready jobs of higher or equal priority ahead", async () => {
    const { soniq } = await withLiveWorker([], ["w.job"]);
    await soniq.jobs.enqueue("w.job", {}, { priority: 1 });
    await soniq.jobs.enqueue("w.job", {}, { priority: 100 });
    await soniq.jobs.enqueue("w.job", {}, { priority: 500 });
    const last = await soniq.jobs.enqueue("w.job", {}, { priority: 100 });
    const e = record(await soniq.jobs.explain(last.id));
    expect(e.verdict).toBe("ready");
    expect(e.reasons).toEqual([
      expect.objectContaining({ code: "waiting_behind", evidence: { ahead: 2, capped: false } }),
    ]);
  });

  it("explain/flow-steps: a waiting step's job id is waiting_on_parents (pending refs); a held one held_by_dead_letter (parent, dead letter, reason)", async () => {
    const soniq = app();
    soniq.job("t.fail", async () => {
      throw new PermanentError("declined");
    });
    soniq.job("t.ok", async () => 1);
    const flow = await soniq.flows.start({
      steps: {
        a: { job: "t.fail" },
        b: { job: "t.ok" },
        c: { job: "t.ok", dependsOn: ["a", "b"] },
      },
    });
    const waiting = record(await soniq.jobs.explain(flow.jobs.c as string));
    expect(waiting).toMatchObject({ status: "waiting", verdict: "waiting" });
    expect(codes(waiting)).toEqual(["waiting_on_parents"]);
    expect(waiting.reasons[0]?.evidence).toMatchObject({ flowId: flow.id, ref: "c", pending: ["a", "b"] });
    await soniq.worker().runOnce();
    const held = record(await soniq.jobs.explain(flow.jobs.c as string));
    expect(held).toMatchObject({ status: "held", verdict: "held" });
    expect(codes(held)).toEqual(["held_by_dead_letter"]);
    expect(held.reasons[0]?.evidence).toMatchObject({
      parentRef: "a",
      deadLetterId: flow.jobs.a,
      reason: "permanent_failure",
    });
    expect(String(held.reasons[0]?.evidence.lastError)).toContain("declined");
    expect(await soniq.deadLetters.purge(flow.jobs.a as string)).toBe(true);
    const cancelled = record(await soniq.jobs.explain(flow.jobs.c as string));
    expect(cancelled).toMatchObject({ status: "cancelled", verdict: "cancelled" });
    expect(cancelled.reasons[0]?.evidence).toMatchObject({ ref: "c", reason: "parent_purged" });
  });

  it("explain/durable-waits: a job suspended by ctx.sleep is sleeping (step, wake time); one suspended by ctx.waitForSignal is waiting_for_signal (signal, deadline)", async () => {
    const soniq = app();
    soniq.job("t.nap", async (_: unknown, ctx) => {
      await ctx.sleep("nap", 3_600_000);
    });
    soniq.job("t.ask", async (_: unknown, ctx) => {
      await ctx.waitForSignal("approval", { timeoutMs: 86_400_000 });
    });
    const nap = await soniq.jobs.enqueue("t.nap", {});
    const ask = await soniq.jobs.enqueue("t.ask", {});
    await soniq.worker().runOnce();
    const sleeping = record(await soniq.jobs.explain(nap.id));
    expect(sleeping.status).toBe("queued");
    expect(sleeping.reasons[0]).toMatchObject({ code: "sleeping", evidence: { step: "nap" } });
    expect(codes(sleeping)).not.toContain("retry_backoff");
    const waiting = record(await soniq.jobs.explain(ask.id));
    expect(waiting.reasons[0]).toMatchObject({
      code: "waiting_for_signal",
      evidence: { step: "approval", signal: "approval" },
    });
    expect((waiting.reasons[0]?.evidence.deadline as Date | undefined)?.getTime()).toBeGreaterThan(
      Date.now() + 86_000_000,
    );
  });

  it("explain/newer-version: a job whose args are newer than every live handler's version is newer_version (blocked)", async () => {
    const soniq = app({ allowUnknownJobNames: true });
    const w = worker([]);
    await soniq.backend.workers.register(w);
    await soniq.backend.workers.registerTaskNames(w.id, [{ name: "v.job", version: 1 }]);
    const job = await soniq.jobs.enqueue("v.job", {}, { version: 2 });
    const e = record(await soniq.jobs.explain(job.id));
    expect(e.verdict).toBe("blocked");
    expect(e.reasons.find((r) => r.code === "newer_version")?.evidence).toEqual({
      jobName: "v.job",
      version: 2,
      workerVersions: [1],
    });
    await soniq.backend.workers.registerTaskNames(w.id, [{ name: "v.job", version: 2 }]);
    expect(codes(await soniq.jobs.explain(job.id))).not.toContain("newer_version");
  });

  it("explain/every-code-covered: the cases above produced each of the 20 codes", () => {
    expect([...seen].sort()).toEqual([...EXPLAIN_CODES].sort());
  });
});
