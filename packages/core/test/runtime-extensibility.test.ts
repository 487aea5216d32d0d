import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { isSoniqError, type Logger, snooze } from "../src/index.js";
import type { JobEndStatus, MetricsSink } from "../src/plugin.js";
import { memoryApps, memoryBackend } from "./memory.js";
import { eventually } from "./support.js";

const app = memoryApps();

describe("runtime/extensibility", () => {
  it("runtime/middleware-order: outer to inner, hooks in order, results can be transformed", async () => {
    const soniq = app();
    const trace: string[] = [];
    soniq.use(async (ctx, next) => {
      trace.push(`a-in:${ctx.jobName}`);
      const r = await next();
      trace.push("a-out");
      return { wrapped: r };
    });
    soniq.use({
      name: "b",
      beforeJob: () => void trace.push("before"),
      afterJob: (_ctx, result) => void trace.push(`after:${JSON.stringify(result)}`),
      middleware: async (_ctx, next) => {
        trace.push("b-in");
        const r = await next();
        trace.push("b-out");
        return r;
      },
    });
    const job = soniq.job("mw.order", async () => {
      trace.push("handler");
      return 1;
    });
    const { id } = await job.enqueue({});
    await soniq.worker().runOnce();
    expect(trace).toEqual([
      "before",
      "a-in:mw.order",
      "b-in",
      "handler",
      "b-out",
      "a-out",
      'after:{"wrapped":1}',
    ]);
    expect((await soniq.jobs.get(id))?.result ?? null).toEqual({ wrapped: 1 });
  });

  it("runtime/middleware-short-circuit: a middleware can answer without calling the handler, or fail the attempt", async () => {
    const soniq = app();
    let handlerRan = false;
    soniq.use(async (ctx, next) => {
      if (ctx.job.args && (ctx.job.args as { cached?: boolean }).cached) return "from cache";
      if ((ctx.job.args as { deny?: boolean }).deny) throw new Error("denied by middleware");
      return next();
    });
    const job = soniq.job(
      "mw.short",
      async () => {
        handlerRan = true;
        return "from handler";
      },
      { maxAttempts: 1 },
    );
    const cached = await job.enqueue({ cached: true });
    const denied = await job.enqueue({ deny: true });
    await soniq.worker().runOnce();
    expect(handlerRan).toBe(false);
    expect((await soniq.jobs.get(cached.id))?.result ?? null).toBe("from cache");
    expect((await soniq.deadLetters.get(denied.id))?.lastError).toContain("denied by middleware");
  });

  it("runtime/metrics-statuses: done, failed, dead_letter and snoozed reach the sink", async () => {
    const ends: [string, JobEndStatus][] = [];
    const starts: string[] = [];
    const metrics: MetricsSink = {
      recordJobStart: (e) => void starts.push(e.jobName),
      recordJobEnd: (e) => void ends.push([e.jobName, e.status]),
    };
    const soniq = app({ metrics });
    soniq.job("m.ok", async () => 1);
    let failures = 0;
    soniq.job(
      "m.fail",
      async () => {
        failures++;
        throw new Error("x");
      },
      { maxAttempts: 2, retry: { delaysMs: [0] } },
    );
    let snoozed = false;
    soniq.job("m.snooze", async () => {
      if (snoozed) return "ok";
      snoozed = true;
      return snooze(0);
    });
    await soniq.jobs.enqueue("m.ok", {});
    await soniq.worker({ concurrency: 1 }).runOnce();
    await soniq.jobs.enqueue("m.fail", {});
    await soniq.worker({ concurrency: 1 }).runOnce();
    await soniq.jobs.enqueue("m.snooze", {});
    await soniq.worker({ concurrency: 1 }).runOnce();
    expect(failures).toBe(2);
    expect(ends).toEqual([
      ["m.ok", "done"],
      ["m.fail", "failed"],
      ["m.fail", "dead_letter"],
      ["m.snooze", "snoozed"],
      ["m.snooze", "done"],
    ]);
    expect(starts).toHaveLength(5);
  });

  it("runtime/throwing-extensions: hooks, sinks, listeners and loggers that throw never break the loop", async () => {
    const boom = () => {
      throw new Error("extension failure");
    };
    const logger: Logger = { debug: boom, info: boom, warn: boom, error: boom };
    const metrics: MetricsSink = {
      recordJobStart: boom,
      recordJobEnd: async () => boom(),
      recordClaim: boom,
    };
    const soniq = app({ logger, metrics });
    soniq.use({ beforeJob: boom, afterJob: async () => boom(), onError: boom });
    const job = soniq.job(
      "resilient.job",
      async (args: { fail?: boolean }) => {
        if (args.fail) throw new Error("real failure");
        return "ok";
      },
      { maxAttempts: 1 },
    );
    const worker = soniq.worker();
    worker.on("job:start", boom);
    worker.on("job:done", async () => boom());
    const doneIds: string[] = [];
    worker.on("job:done", ({ job }) => void doneIds.push(job.id));
    await worker.start();
    const results = await soniq.jobs.enqueueMany([
      { job, args: {} },
      { job, args: { fail: true } },
      { job, args: {} },
    ]);
    await eventually(() => expect(doneIds).toHaveLength(2));
    await eventually(async () => expect((await soniq.jobs.stats()).dead_letter).toBe(1));
    await worker.stop();
    expect((await soniq.jobs.get(results[0]?.id as string))?.result ?? null).toBe("ok");
  });

  it("runtime/events: typed events for start, done, failed, dead letter and snooze", async () => {
    const soniq = app();
    const seen: string[] = [];
    let snoozes = 0;
    soniq.job("ev.snooze", async () => (snoozes++ === 0 ? snooze(0) : "ok"));
    soniq.job(
      "ev.fail",
      async () => {
        throw new Error("e");
      },
      { maxAttempts: 2, retry: { delaysMs: [0] } },
    );
    const worker = soniq.worker({ concurrency: 1 });
    worker.on("job:start", ({ job }) => void seen.push(`start:${job.jobName}`));
    worker.on("job:done", ({ job, result }) => void seen.push(`done:${job.jobName}:${String(result)}`));
    worker.on(
      "job:failed",
      ({ job, error }) => void seen.push(`failed:${job.jobName}:${error.split("\n")[0]}`),
    );
    worker.on("job:dead_letter", ({ job, reason }) => void seen.push(`dlq:${job.jobName}:${reason}`));
    worker.on("job:snoozed", ({ job }) => void seen.push(`snoozed:${job.jobName}`));
    await soniq.jobs.enqueue("ev.snooze", {});
    await worker.runOnce();
    await soniq.jobs.enqueue("ev.fail", {});
    await worker.runOnce();
    expect(seen).toEqual([
      "start:ev.snooze",
      "snoozed:ev.snooze",
      "start:ev.snooze",
      "done:ev.snooze:ok",
      "start:ev.fail",
      "failed:ev.fail:Error: e",
      "start:ev.fail",
      "dlq:ev.fail:max_retries_exceeded",
    ]);
  });

  it("runtime/run-once-max-jobs: runOnce stops at maxJobs and can be called again", async () => {
    const soniq = app();
    const job = soniq.job("once.job", async (args: { i: number }) => args.i);
    await soniq.jobs.enqueueMany([1, 2, 3, 4, 5].map((i) => ({ job, args: { i } })));
    const worker = soniq.worker({ concurrency: 2 });
    expect(await worker.runOnce({ maxJobs: 2 })).toBe(2);
    expect((await soniq.jobs.stats()).queued).toBe(3);
    expect(await worker.runOnce()).toBe(3);
    expect(await worker.runOnce()).toBe(0);
    expect((await soniq.jobs.stats()).done).toBe(5);
  });
});

describe("runtime/queries", () => {
  it("runtime/dead-letter-service: list, get, replay (known names only), purge, export", async () => {
    const backend = memoryBackend();
    const soniq = app({}, backend);
    const job = soniq.job(
      "dl.job",
      async () => {
        throw new Error("always");
      },
      { maxAttempts: 1 },
    );
    const ids = (await soniq.jobs.enqueueMany([1, 2].map((n) => ({ job, args: { n } })))).map((r) => r.id);
    await soniq.worker().runOnce();
    const listed = await soniq.deadLetters.list({ jobName: "dl.job" });
    expect(listed.map((r) => r.id).sort()).toEqual([...ids].sort());
    const text = await soniq.deadLetters.export();
    const lines = text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { id: string; movedToDeadLetterAt: string });
    expect(lines.map((l) => l.id).sort()).toEqual([...ids].sort());
    expect(typeof lines[0]?.movedToDeadLetterAt).toBe("string");
    const stream = new PassThrough();
    const chunks: string[] = [];
    stream.on("data", (c: Buffer) => chunks.push(c.toString()));
    expect(await soniq.deadLetters.export({ limit: 1 }, stream)).toBe(1);
    expect(chunks.join("").trim().split("\n")).toHaveLength(1);

    const newId = await soniq.deadLetters.replay(ids[0] as string);
    expect(newId).toBeTruthy();
    expect(await soniq.jobs.get(newId as string)).toMatchObject({
      status: "queued",
      attempts: 0,
      args: { n: 1 },
    });
    expect((await soniq.deadLetters.get(ids[0] as string))?.resurrectionCount).toBe(1);
    expect(await soniq.deadLetters.replay("00000000-0000-4000-8000-000000000000")).toBeNull();

    const stranger = app({}, backend);
    const err = await stranger.deadLetters.replay(ids[1] as string).catch((e: unknown) => e);
    expect(isSoniqError(err, "SONIQ_UNKNOWN_TASK_NAME")).toBe(true);
    expect(await soniq.deadLetters.purge(ids[1] as string)).toBe(true);
    expect(await soniq.deadLetters.purge(ids[1] as string)).toBe(false);
  });

  it("runtime/list-and-stats: jobs.list filters, jobs.stats has six keys", async () => {
    const soniq = app();
    const job = soniq.job("q.job", async () => null);
    await job.enqueue({}, { queue: "alpha" });
    await job.enqueue({}, { queue: "beta" });
    expect((await soniq.jobs.list({ queue: "alpha" })).map((j) => j.queue)).toEqual(["alpha"]);
    expect(Object.keys(await soniq.jobs.stats()).sort()).toEqual(
      ["cancelled", "dead_letter", "done", "processing", "queued", "total"].sort(),
    );
    expect((await soniq.jobs.stats({ queue: "beta" })).queued).toBe(1);
  });

  it("runtime/instances-share-nothing: two instances keep separate registries and backends", async () => {
    const one = app();
    const two = app();
    one.job("same.name", async () => "one");
    two.job("same.name", async () => "two");
    const { id } = await one.jobs.enqueue("same.name", {});
    expect(await two.jobs.get(id)).toBeNull();
    await one.worker().runOnce();
    expect((await one.jobs.get(id))?.result ?? null).toBe("one");
    expect(two.jobs.names()).toEqual(["same.name"]);
  });
});
