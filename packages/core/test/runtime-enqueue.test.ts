import { describe, expect, it } from "vitest";
import { z } from "zod";
import { isSoniqError } from "../src/index.js";
import { memoryApps, memoryBackend, overriding } from "./memory.js";
import { eventually, gate, rejection } from "./support.js";

const app = memoryApps();

describe("runtime/enqueue-validation", () => {
  it("runtime/schema-rejects-at-enqueue: SONIQ_TASK_ARGS_INVALID with issues, nothing written", async () => {
    const soniq = app();
    const job = soniq.job("typed.strict", async (args) => args.email, {
      schema: z.object({ email: z.string().email() }),
    });
    const err = await rejection(job.enqueue({ email: "nope" }));
    expect(isSoniqError(err, "SONIQ_TASK_ARGS_INVALID")).toBe(true);
    const issues = (err as { context: { issues: { path: string[] }[] } }).context.issues;
    expect(issues[0]?.path).toEqual(["email"]);
    expect((await soniq.jobs.stats()).total).toBe(0);
  });

  it("runtime/args-must-be-json: functions, BigInt, cycles, Dates and top-level undefined are rejected", async () => {
    const soniq = app();
    const job = soniq.job("json.only", async () => null);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const bad of [
      undefined,
      { f: () => 1 },
      { n: 1n },
      cyclic,
      { when: new Date() },
      [undefined],
      { x: Number.NaN },
    ]) {
      const err = await rejection(job.enqueue(bad));
      expect(isSoniqError(err, "SONIQ_TASK_ARGS_INVALID"), String(bad)).toBe(true);
    }
    expect((await soniq.jobs.stats()).total).toBe(0);
    const { id } = await job.enqueue({ keep: 1, drop: undefined });
    expect((await soniq.jobs.get(id))?.args).toEqual({ keep: 1 });
  });

  it("runtime/names: invalid names are rejected at definition and enqueue; unknown names in strict mode", async () => {
    const soniq = app();
    expect(() => soniq.job("Bad-Name", async () => null)).toThrow(
      expect.objectContaining({ code: "SONIQ_INVALID_TASK_NAME" }),
    );
    expect(isSoniqError(await rejection(soniq.jobs.enqueue("Bad Name", {})), "SONIQ_INVALID_TASK_NAME")).toBe(
      true,
    );
    expect(
      isSoniqError(await rejection(soniq.jobs.enqueue("not.defined", {})), "SONIQ_UNKNOWN_TASK_NAME"),
    ).toBe(true);
    soniq.job("dup.name", async () => null);
    expect(() => soniq.job("dup.name", async () => null)).toThrow(/already defined/);
    expect((await soniq.jobs.stats()).total).toBe(0);
  });

  it("runtime/enqueue-many: one call, input order; a bad item names its index and nothing is written", async () => {
    const soniq = app();
    const a = soniq.job("many.a", async () => null, { schema: z.object({ n: z.number() }) });
    soniq.job("many.b", async () => null);
    const err = await rejection(
      soniq.jobs.enqueueMany([
        { job: a, args: { n: 1 } },
        { job: "many.b", args: {} },
        { job: a, args: { n: "two" } },
      ]),
    );
    expect(isSoniqError(err, "SONIQ_TASK_ARGS_INVALID")).toBe(true);
    expect((err as { context: { index: number } }).context.index).toBe(2);
    expect((await soniq.jobs.stats()).total).toBe(0);
    const results = await soniq.jobs.enqueueMany([
      { job: a, args: { n: 1 }, options: { priority: 5 } },
      { job: "many.b", args: { x: true }, options: { queue: "other" } },
    ]);
    expect(results).toHaveLength(2);
    const rows = await Promise.all(results.map((r) => soniq.jobs.get(r.id)));
    expect(rows.map((r) => [r?.jobName, r?.priority, r?.queue])).toEqual([
      ["many.a", 5, "default"],
      ["many.b", 100, "other"],
    ]);
    const unknown = await rejection(
      soniq.jobs.enqueueMany([
        { job: "many.b", args: {} },
        { job: "nope.x", args: {} },
      ]),
    );
    expect((unknown as { code: string; context: { index: number } }).context.index).toBe(1);
  });

  it("runtime/dedup-and-unique: dedupKey and unique (canonical args) return the queued job", async () => {
    const soniq = app();
    const job = soniq.job("dedup.me", async () => null, { unique: true });
    const first = await job.enqueue({ a: 1, b: { c: 2, d: 3 } });
    const same = await job.enqueue({ b: { d: 3, c: 2 }, a: 1 });
    expect(same).toEqual({ id: first.id, deduplicated: true });
    const other = await job.enqueue({ a: 2 });
    expect(other.deduplicated).toBe(false);
    const plain = soniq.job("dedup.key", async () => null);
    const k1 = await plain.enqueue({ x: 1 }, { dedupKey: "order-7" });
    const k2 = await plain.enqueue({ x: 2 }, { dedupKey: "order-7" });
    expect(k2).toEqual({ id: k1.id, deduplicated: true });
  });

  it("runtime/enqueue-options: runAt/delayMs schedule, bad options fail in one error, tx is refused on memory", async () => {
    const soniq = app();
    const job = soniq.job("sched.job", async () => "ran");
    const later = await job.enqueue({}, { delayMs: 60_000 });
    const past = await job.enqueue({}, { runAt: new Date(Date.now() - 1000) });
    expect(await soniq.worker().runOnce()).toBe(1);
    expect((await soniq.jobs.get(later.id))?.status).toBe("queued");
    expect((await soniq.jobs.get(past.id))?.status).toBe("done");
    const err = await rejection(job.enqueue({}, { runAt: new Date(), delayMs: 5, priority: 1.5 }));
    expect(isSoniqError(err, "SONIQ_INVALID_OPTIONS")).toBe(true);
    expect((err as { context: { problems: string[] } }).context.problems).toHaveLength(2);
    const txErr = await rejection(job.enqueue({}, { tx: {} as never }));
    expect(isSoniqError(txErr, "SONIQ_TRANSACTION_UNSUPPORTED")).toBe(true);
  });
});

/** A memory backend whose wake-up subscription is made only once `subscribed` opens; `subscriptions` counts live ones. */
function slowSubscription() {
  const base = memoryBackend();
  const subscribed = gate();
  let live = 0;
  const backend = overriding(base, "wakeUps", {
    subscribe: async (listener) => {
      await subscribed.promise;
      const unsubscribe = await base.wakeUps.subscribe(listener);
      live++;
      return async () => {
        live--;
        await unsubscribe();
      };
    },
  });
  return { backend, subscribed, subscriptions: () => live };
}

describe("runtime/wake-up", () => {
  it("runtime/worker-wakes-on-enqueue: a started worker picks up a new job without waiting for the poll", async () => {
    const soniq = app();
    const job = soniq.job("wake.me", async () => "awake");
    const worker = soniq.worker({ pollIntervalMs: 600_000 });
    await worker.start();
    const { id } = await job.enqueue({});
    await eventually(async () => expect((await soniq.jobs.get(id))?.status).toBe("done"), 2000);
    await worker.stop();
  });

  it("runtime/claims-before-wake-ups: a slow wake-up subscription does not hold the first claim; once made, it claims what came meanwhile", async () => {
    // Through a transaction-mode pooler Postgres's listen "auto" waits out a 3 s probe before subscribe answers.
    const { backend, subscribed, subscriptions } = slowSubscription();
    const soniq = app({}, backend);
    const job = soniq.job("wake.late", async () => "ran");
    const before = await job.enqueue({});
    const worker = soniq.worker({ pollIntervalMs: 600_000 });
    await worker.start();
    await eventually(async () => expect((await soniq.jobs.get(before.id))?.status).toBe("done"));
    // Enqueued with nobody subscribed: its wake-up is lost, and the next poll is ten minutes away.
    const meanwhile = await job.enqueue({});
    expect((await soniq.jobs.get(meanwhile.id))?.status).toBe("queued");
    subscribed.open();
    await eventually(async () => expect((await soniq.jobs.get(meanwhile.id))?.status).toBe("done"));
    expect(subscriptions()).toBe(1);
    await worker.stop();
    expect(subscriptions()).toBe(0);
  });

  it("runtime/stop-before-subscribed: a worker stopped while its subscription is on its way drops it once made", async () => {
    const { backend, subscribed, subscriptions } = slowSubscription();
    const worker = app({}, backend).worker({ pollIntervalMs: 600_000 });
    await worker.start();
    const stopped = worker.stop();
    subscribed.open();
    await stopped;
    expect(worker.state).toBe("stopped");
    expect(subscriptions()).toBe(0);
  });
});

describe("runtime/job-ids", () => {
  const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

  it("runtime/job-ids-are-time-ordered: UUIDv7, ascending in enqueue order, within a batch and across calls", async () => {
    const soniq = app();
    const job = soniq.job("ids.ordered", async () => null);
    const first = await job.enqueue({ n: 0 });
    const batch = await soniq.jobs.enqueueMany(Array.from({ length: 500 }, (_, n) => ({ job, args: { n } })));
    const last = await job.enqueue({ n: 501 });
    const ids = [first.id, ...batch.map((h) => h.id), last.id];
    for (const id of ids) expect(id).toMatch(V7);
    // Adjacent in every index keyed by id: string order is enqueue order (the point of version 7).
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
