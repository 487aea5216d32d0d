/** soniq.queues and soniq.audit on the memory backend: validation, merge semantics, actors, the claim. */
import { describe, expect, it } from "vitest";
import { manualClock } from "../../testkit/src/clock.js";
import { isSoniqError } from "../src/common/errors.js";
import { memoryApps, memoryBackend, overriding } from "./memory.js";
import { eventually } from "./support.js";

const app = memoryApps();

describe("queues/api", () => {
  it("queues/api-bad-input-rejected: bad names, limits and actors are SONIQ_INVALID_ARGUMENT and write nothing", async () => {
    const soniq = app();
    const bad: [string, () => Promise<unknown>][] = [
      ["name", () => soniq.queues.pause("Bad Queue")],
      ["missing name", () => soniq.queues.resume(undefined as never)],
      ["concurrency 0", () => soniq.queues.configure("q", { concurrency: 0 })],
      ["fractional", () => soniq.queues.configure("q", { groupConcurrency: 1.5 })],
      ["rate without perMs", () => soniq.queues.configure("q", { rateLimit: { max: 1 } as never })],
      ["unknown key", () => soniq.queues.configure("q", { concurency: 2 } as never)],
      ["not an object", () => soniq.queues.configure("q", null as never)],
      ["nothing to configure", () => soniq.queues.configure("q", {})],
      ["empty actor", () => soniq.queues.pause("q", { actor: "" })],
      ["audit action", () => soniq.audit.list({ action: "queue.explode" as never })],
    ];
    for (const [label, call] of bad) {
      const err = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isSoniqError(err, "SONIQ_INVALID_ARGUMENT"), label).toBe(true);
    }
    expect(await soniq.queues.list()).toEqual([]);
    expect(await soniq.audit.list()).toEqual([]);
    soniq.job("x.y", async () => null);
    const groupErr = await soniq.jobs.enqueue("x.y", {}, { group: "" }).catch((e: unknown) => e);
    expect(
      isSoniqError(groupErr, "SONIQ_INVALID_OPTIONS") || isSoniqError(groupErr, "SONIQ_INVALID_ARGUMENT"),
    ).toBe(true);
  });

  it("queues/api-audited: each action writes one row with the actor (default api), newest first", async () => {
    const soniq = app();
    await soniq.queues.pause("emails", { create: true });
    await soniq.queues.configure(
      "emails",
      { concurrency: 2, rateLimit: { max: 5, perMs: 1000 } },
      { actor: "ops" },
    );
    await soniq.queues.configure("emails", { rateLimit: null }, { actor: "ops" });
    await soniq.queues.resume("emails", { actor: "alice" });
    const rows = await soniq.audit.list();
    expect(rows.map((r) => [r.action, r.actor, r.target, r.outcome])).toEqual([
      ["queue.resume", "alice", "emails", "ok"],
      ["queue.configure", "ops", "emails", "ok"],
      ["queue.configure", "ops", "emails", "ok"],
      ["queue.pause", "api", "emails", "ok"],
    ]);
    expect(rows[1]?.params).toEqual({ rateLimit: null });
    expect(await soniq.queues.get("emails")).toMatchObject({
      paused: false,
      concurrency: 2,
      rateLimit: null,
    });
    expect(await soniq.audit.list({ action: "queue.pause", limit: 5 })).toHaveLength(1);
  });

  it("queues/worker-honours-pause: a worker runs nothing from a paused queue and resumes on resume()", async () => {
    const soniq = app();
    const ran: string[] = [];
    const work = soniq.job(
      "q.work",
      async (_args, ctx) => {
        ran.push(ctx.jobId);
      },
      { queue: "work" },
    );
    await soniq.queues.pause("work");
    const { id } = await work.enqueue({}, { group: "tenant:1" });
    expect((await soniq.jobs.get(id))?.group).toBe("tenant:1");
    const worker = soniq.worker({ pollIntervalMs: 20 });
    await worker.start();
    const [info] = await soniq.queues.list();
    expect(info).toMatchObject({ name: "work", paused: true, stats: { queued: 1 } });
    expect(ran).toEqual([]);
    await soniq.queues.resume("work");
    await eventually(() => expect(ran).toEqual([id]));
    await worker.stop();
  });
});

describe("queues/limited-claims", () => {
  it("queues/capped-claim-never-spins: a worker whose claims a full queue caps waits for capacity or its poll", async () => {
    const backend = memoryBackend();
    const claims: { limitedMax: number | undefined; taken: number; capped: boolean }[] = [];
    const counted = overriding(backend, "runs", {
      claim: async (request) => {
        const result = await backend.runs.claim(request);
        claims.push({
          limitedMax: request.limitedMax,
          taken: result.jobs.length,
          capped: result.capped !== null,
        });
        return result;
      },
    });
    const soniq = app({}, counted);
    const ran: string[] = [];
    soniq.job("q.spin", async (_args, ctx) => void ran.push(ctx.jobId), { queue: "spin" });
    await soniq.queues.configure("spin", { concurrency: 1 });
    const first = await soniq.jobs.enqueue("q.spin", {});
    const second = await soniq.jobs.enqueue("q.spin", {});
    // Someone else holds the queue's one slot: every claim of the worker comes back capped and empty.
    const [held] = (await soniq.backend.runs.claim({ queues: ["spin"], limit: 1, workerId: null })).jobs;
    expect(held?.id).toBe(first.id);
    claims.length = 0;
    const worker = soniq.worker({ queues: ["spin"], concurrency: 4, pollIntervalMs: 30 });
    await worker.start();
    await eventually(() => expect(claims.length).toBeGreaterThanOrEqual(3));
    // It holds nothing that could free capacity, so it claims again at its poll only: a few claims, not a loop.
    expect(claims.length).toBeLessThan(10);
    expect(claims.every((c) => c.taken === 0 && c.capped && c.limitedMax === 4)).toBe(true);
    const settled = await soniq.backend.runs.settle([
      { kind: "done", id: first.id, attempt: 1, result: null, resultTtlMs: 60_000 },
    ]);
    expect(settled).toEqual([true]);
    await eventually(() => expect(ran).toEqual([second.id]));
    await worker.stop();
  });
});

describe("audit/api", () => {
  it("audit/operator-actions: cancel, replay and purge write one row each with the actor; a miss is not_found", async () => {
    const soniq = app();
    soniq.job(
      "a.job",
      async () => {
        throw new Error("boom");
      },
      { maxAttempts: 1 },
    );
    const { id } = await soniq.jobs.enqueue("a.job", {});
    await soniq.worker().runOnce();
    const newId = await soniq.deadLetters.replay(id, { actor: "ops", priority: 5 });
    expect(typeof newId).toBe("string");
    expect(await soniq.jobs.cancel(newId as string, { actor: "bob" })).toBe(true);
    expect(await soniq.deadLetters.purge(id)).toBe(true);
    expect(await soniq.deadLetters.purge(id, { actor: "bob" })).toBe(false);
    const rows = await soniq.audit.list();
    expect(rows.map((r) => [r.action, r.actor, r.target, r.outcome])).toEqual([
      ["dead_letter.purge", "bob", id, "not_found"],
      ["dead_letter.purge", "api", id, "ok"],
      ["job.cancel", "bob", newId, "ok"],
      ["dead_letter.replay", "ops", id, "ok"],
    ]);
    expect(rows[3]?.details).toEqual({ newId });
    expect(rows[3]?.params).toMatchObject({ priority: 5 });
    const err = await soniq.jobs.cancel(id, { actor: 7 as never }).catch((e: unknown) => e);
    expect(isSoniqError(err, "SONIQ_INVALID_ARGUMENT")).toBe(true);
    expect(await soniq.audit.list()).toHaveLength(4);
  });

  it("audit/trigger-conflict: a trigger at an instant whose tick made no job throws SONIQ_INVALID_STATE and writes one failed row", async () => {
    const clock = manualClock(Date.UTC(2026, 0, 1));
    const soniq = app({ clock });
    soniq.schedules.declare("reports.hourly", { cron: "0 * * * *" });
    const first = await soniq.schedules.trigger("reports.hourly", { actor: "ops" }); // stores it
    expect(await soniq.schedules.pause("reports.hourly")).toBe(true);
    await clock.advance(3_600_000);
    expect(await soniq.schedules.resume("reports.hourly")).toBe(true); // records 01:00 skipped
    const err = await soniq.schedules.trigger("reports.hourly", { actor: "ops" }).catch((e: unknown) => e);
    expect(isSoniqError(err, "SONIQ_INVALID_STATE")).toBe(true);
    const rows = await soniq.audit.list({ action: "schedule.trigger" });
    expect(rows.map((r) => [r.actor, r.outcome, r.details])).toEqual([
      ["ops", "failed", null],
      ["ops", "ok", { jobId: first }],
    ]);
  });
});
