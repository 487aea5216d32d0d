/** Runtime scenarios on the memory backend: cancel, shutdown, extensibility, events, queries, lifecycle. */
import { execFile } from "node:child_process";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { memoryBackend } from "@soniq/backend-memory";
import {
  isSoniqError,
  JobAbortedError,
  type JobEndStatus,
  type Logger,
  type MetricsSink,
  Soniq,
  type SoniqOptions,
  snooze,
} from "@soniq/core";
import { afterEach, describe, expect, it } from "vitest";
import { eventually, gate } from "./runtime-support.js";

const open: Soniq[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

function app(options: Partial<SoniqOptions> = {}, backend = memoryBackend()): Soniq {
  const soniq = new Soniq({ backend, ...options });
  open.push(soniq);
  return soniq;
}

/** A handler that waits until its signal aborts (or the gate opens), recording the abort reason. */
function waiter(started: { open: () => void }, release?: Promise<void>) {
  const seen: { reason?: unknown } = {};
  const handler = (_args: unknown, ctx: { signal: AbortSignal }) =>
    new Promise<string>((resolve) => {
      started.open();
      ctx.signal.addEventListener("abort", () => {
        seen.reason = ctx.signal.reason;
        resolve("finished after abort");
      });
      release?.then(() => resolve("released"));
    });
  return { handler, seen };
}

describe("runtime/cancel", () => {
  it("runtime/cancel-queued: a queued job is cancelled and never runs; a second cancel is false", async () => {
    const soniq = app();
    let ran = false;
    const job = soniq.job("cancel.queued", async () => {
      ran = true;
    });
    const { id } = await job.enqueue({});
    expect(await soniq.cancelJob(id)).toBe(true);
    expect(await soniq.cancelJob(id)).toBe(false);
    expect(await soniq.worker().runOnce()).toBe(0);
    expect(ran).toBe(false);
    expect((await soniq.getJob(id))?.status).toBe("cancelled");
  });

  it("runtime/cancel-running: the signal aborts at once and the late completion is ignored", async () => {
    const soniq = app();
    const started = gate();
    const { handler, seen } = waiter(started);
    const job = soniq.job("cancel.running", handler);
    const worker = soniq.worker();
    const cancelled: string[] = [];
    worker.on("job:cancelled", ({ job, why }) => void cancelled.push(`${job.id}:${why}`));
    await worker.start();
    const { id } = await job.enqueue({});
    await started.promise;
    expect(await soniq.cancelJob(id)).toBe(true);
    expect(seen.reason).toBeInstanceOf(JobAbortedError);
    expect((seen.reason as JobAbortedError).why).toBe("cancelled");
    expect(cancelled).toEqual([`${id}:cancelled`]);
    await worker.stop();
    expect((await soniq.getJob(id))?.status).toBe("cancelled");
  });

  it("runtime/cancel-from-another-instance: the worker notices at its next heartbeat", async () => {
    const backend = memoryBackend();
    const owner = app({}, backend);
    const other = app({ allowUnknownJobNames: true }, backend);
    const started = gate();
    const { handler, seen } = waiter(started);
    const job = owner.job("cancel.remote", handler);
    const worker = owner.worker({ heartbeatIntervalMs: 30 });
    await worker.start();
    const { id } = await job.enqueue({});
    await started.promise;
    expect(await other.cancelJob(id)).toBe(true);
    await eventually(() => expect((seen.reason as JobAbortedError | undefined)?.why).toBe("cancelled"));
    await worker.stop();
    expect((await owner.getJob(id))?.status).toBe("cancelled");
  });
});

describe("runtime/shutdown", () => {
  it("runtime/stop-waits-for-in-flight: a running job finishes; unstarted buffered jobs go back unspent", async () => {
    const soniq = app();
    const started = gate();
    const release = gate();
    const { handler } = waiter(started, release.promise);
    const job = soniq.job("stop.graceful", handler, { maxAttempts: 1 });
    const [a, b, c] = await soniq.enqueueMany([0, 1, 2].map((i) => ({ job, args: { i } })));
    const worker = soniq.worker({ concurrency: 1, batchSize: 4 });
    await worker.start();
    await started.promise;
    const stopping = worker.stop();
    expect(worker.stop()).toBe(stopping);
    release.open();
    await stopping;
    expect(worker.state).toBe("stopped");
    expect(await soniq.getJob(a?.id as string)).toMatchObject({ status: "done", result: "released" });
    for (const r of [b, c]) {
      // Given back with the claim's attempt refunded, so maxAttempts 1 still allows a run.
      expect(await soniq.getJob(r?.id as string)).toMatchObject({ status: "queued", attempts: 0 });
    }
    expect(await soniq.worker().runOnce()).toBe(2);
  });

  it("runtime/stop-timeout-nacks: after shutdownTimeoutMs the signal aborts and the job is given back", async () => {
    const soniq = app();
    const started = gate();
    const job = soniq.job("stop.stubborn", async (_args, ctx) => {
      started.open();
      await new Promise(() => {}); // ignores its signal on purpose
      return ctx.attempt;
    });
    const { id } = await job.enqueue({});
    const worker = soniq.worker({ shutdownTimeoutMs: 30 });
    const nacked: string[] = [];
    worker.on("job:nacked", ({ job }) => void nacked.push(job.id));
    await worker.start();
    await started.promise;
    await worker.stop();
    expect(nacked).toEqual([id]);
    expect(await soniq.getJob(id)).toMatchObject({ status: "queued", attempts: 1, lastError: null });
  });

  it("runtime/close: stops workers, is memoised, and later calls reject with SONIQ_CLOSED", async () => {
    const soniq = app();
    const job = soniq.job("close.me", async () => null);
    const worker = soniq.worker();
    await worker.start();
    const closing = soniq.close();
    expect(soniq.close()).toBe(closing);
    await closing;
    expect(worker.state).toBe("stopped");
    await expect(job.enqueue({})).rejects.toMatchObject({ code: "SONIQ_CLOSED" });
    expect(() => soniq.worker()).toThrow(expect.objectContaining({ code: "SONIQ_CLOSED" }));
  });

  it("runtime/worker-states: start twice and runOnce on a started worker are refused", async () => {
    const soniq = app();
    const worker = soniq.worker();
    await worker.start();
    await expect(worker.start()).rejects.toMatchObject({ code: "SONIQ_INVALID_STATE" });
    await expect(worker.runOnce()).rejects.toMatchObject({ code: "SONIQ_INVALID_STATE" });
    await worker.stop();
    const fresh = soniq.worker();
    await fresh.stop();
    await expect(fresh.start()).rejects.toMatchObject({ code: "SONIQ_INVALID_STATE" });
  });

  it("runtime/declared-stale: a worker whose heartbeat is refused logs it and re-registers", async () => {
    const warnings: string[] = [];
    const logger: Logger = { debug() {}, info() {}, error() {}, warn: (_o, msg) => void warnings.push(msg) };
    const soniq = app({ logger });
    const worker = soniq.worker({ heartbeatIntervalMs: 20 });
    const stale = gate<string>();
    worker.on("worker:stale", ({ workerId }) => stale.open(workerId));
    await worker.start();
    // A peer with a tiny threshold declares this worker stale as soon as its heartbeat is a few ms old.
    await eventually(async () => {
      expect((await soniq.backend.recoverStaleWorkers(1)).workerIds).toContain(worker.id);
    });
    expect(await stale.promise).toBe(worker.id);
    await eventually(async () => {
      const row = (await soniq.backend.listWorkers()).find((w) => w.id === worker.id);
      expect(row?.status).toBe("active");
    });
    expect(warnings.some((w) => w.includes("declared stale"))).toBe(true);
    await worker.stop();
  });
});

describe("runtime/failures-and-leaks", () => {
  it("runtime/write-failure-reported: a failed state write is logged and emitted; the job stays claimed", async () => {
    const backend = memoryBackend();
    const failing = new Proxy(backend, {
      get(target, prop, receiver) {
        if (prop === "retry") return () => Promise.reject(new Error("database unavailable"));
        const value: unknown = Reflect.get(target, prop, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const errors: string[] = [];
    const logger: Logger = { debug() {}, info() {}, warn() {}, error: (_o, msg) => void errors.push(msg) };
    const soniq = app({ logger }, failing);
    const job = soniq.job("write.fails", async () => {
      throw new Error("handler failure");
    });
    const worker = soniq.worker();
    const emitted = gate<string>();
    worker.on("error", ({ during }) => emitted.open(during));
    await worker.start();
    const { id } = await job.enqueue({});
    expect(await emitted.promise).toBe("retry");
    expect(errors.some((m) => m.includes("stale-worker recovery"))).toBe(true);
    expect((await soniq.getJob(id))?.status).toBe("processing");
    await worker.stop();
  });

  it("runtime/run-once-in-a-script: a script awaiting runOnce gets its answer even with only a timeout pending", async () => {
    const script = fileURLToPath(new URL("./runtime-child-run-once.ts", import.meta.url));
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--conditions=source", "--import", "tsx", script],
      {
        timeout: 60_000,
      },
    );
    expect(JSON.parse(stdout)).toEqual({ ran: 2, done: 1, deadLetter: 1 });
  }, 90_000);

  it("runtime/no-leaks: the runtime's timers never keep the process alive, before or after close", async () => {
    // getActiveResourcesInfo() lists only handles that keep the event loop alive (unref'd timers are not).
    const count = () =>
      process.getActiveResourcesInfo().filter((r) => r === "Timeout" || r === "Immediate").length;
    const baseline = count();
    const soniq = new Soniq({ backend: memoryBackend() });
    const job = soniq.job("leak.check", async () => "ok", { timeoutMs: 60_000 });
    const worker = soniq.worker({ pollIntervalMs: 50, heartbeatIntervalMs: 20 });
    await worker.start();
    await soniq.enqueueMany([1, 2, 3].map((i) => ({ job, args: { i } })));
    await eventually(async () => expect((await soniq.getQueueStats()).done).toBe(3));
    expect(count()).toBeLessThanOrEqual(baseline); // heartbeat, poll, timeout and maintenance timers are unref'd
    await soniq.close();
    expect(worker.state).toBe("stopped");
    await eventually(() => expect(count()).toBeLessThanOrEqual(baseline));
  });
});

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
    expect(await soniq.getResult(id)).toEqual({ wrapped: 1 });
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
    expect(await soniq.getResult(cached.id)).toBe("from cache");
    expect((await soniq.deadLetter.get(denied.id))?.lastError).toContain("denied by middleware");
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
    await soniq.enqueue("m.ok", {});
    await soniq.worker({ concurrency: 1 }).runOnce();
    await soniq.enqueue("m.fail", {});
    await soniq.worker({ concurrency: 1 }).runOnce();
    await soniq.enqueue("m.snooze", {});
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
    const results = await soniq.enqueueMany([
      { job, args: {} },
      { job, args: { fail: true } },
      { job, args: {} },
    ]);
    await eventually(() => expect(doneIds).toHaveLength(2));
    await eventually(async () => expect((await soniq.getQueueStats()).dead_letter).toBe(1));
    await worker.stop();
    expect(await soniq.getResult(results[0]?.id as string)).toBe("ok");
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
    await soniq.enqueue("ev.snooze", {});
    await worker.runOnce();
    await soniq.enqueue("ev.fail", {});
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
    await soniq.enqueueMany([1, 2, 3, 4, 5].map((i) => ({ job, args: { i } })));
    const worker = soniq.worker({ concurrency: 2 });
    expect(await worker.runOnce({ maxJobs: 2 })).toBe(2);
    expect((await soniq.getQueueStats()).queued).toBe(3);
    expect(await worker.runOnce()).toBe(3);
    expect(await worker.runOnce()).toBe(0);
    expect((await soniq.getQueueStats()).done).toBe(5);
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
    const ids = (await soniq.enqueueMany([1, 2].map((n) => ({ job, args: { n } })))).map((r) => r.id);
    await soniq.worker().runOnce();
    const listed = await soniq.deadLetter.list({ jobName: "dl.job" });
    expect(listed.map((r) => r.id).sort()).toEqual([...ids].sort());
    const text = await soniq.deadLetter.export();
    const lines = text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { id: string; movedToDeadLetterAt: string });
    expect(lines.map((l) => l.id).sort()).toEqual([...ids].sort());
    expect(typeof lines[0]?.movedToDeadLetterAt).toBe("string");
    const stream = new PassThrough();
    const chunks: string[] = [];
    stream.on("data", (c: Buffer) => chunks.push(c.toString()));
    expect(await soniq.deadLetter.export({ limit: 1 }, stream)).toBe(1);
    expect(chunks.join("").trim().split("\n")).toHaveLength(1);

    const newId = await soniq.deadLetter.replay(ids[0] as string);
    expect(newId).toBeTruthy();
    expect(await soniq.getJob(newId as string)).toMatchObject({
      status: "queued",
      attempts: 0,
      args: { n: 1 },
    });
    expect((await soniq.deadLetter.get(ids[0] as string))?.resurrectionCount).toBe(1);
    expect(await soniq.deadLetter.replay("00000000-0000-4000-8000-000000000000")).toBeNull();

    const stranger = app({}, backend);
    const err = await stranger.deadLetter.replay(ids[1] as string).catch((e: unknown) => e);
    expect(isSoniqError(err, "SONIQ_UNKNOWN_TASK_NAME")).toBe(true);
    expect(await soniq.deadLetter.purge(ids[1] as string)).toBe(true);
    expect(await soniq.deadLetter.purge(ids[1] as string)).toBe(false);
  });

  it("runtime/list-and-stats: listJobs filters, getQueueStats has six keys", async () => {
    const soniq = app();
    const job = soniq.job("q.job", async () => null);
    await job.enqueue({}, { queue: "alpha" });
    await job.enqueue({}, { queue: "beta" });
    expect((await soniq.listJobs({ queue: "alpha" })).map((j) => j.queue)).toEqual(["alpha"]);
    expect(Object.keys(await soniq.getQueueStats()).sort()).toEqual(
      ["cancelled", "dead_letter", "done", "processing", "queued", "total"].sort(),
    );
    expect((await soniq.getQueueStats({ queue: "beta" })).queued).toBe(1);
  });

  it("runtime/instances-share-nothing: two instances keep separate registries and backends", async () => {
    const one = app();
    const two = app();
    one.job("same.name", async () => "one");
    two.job("same.name", async () => "two");
    const { id } = await one.enqueue("same.name", {});
    expect(await two.getJob(id)).toBeNull();
    await one.worker().runOnce();
    expect(await one.getResult(id)).toBe("one");
    expect(two.jobNames()).toEqual(["same.name"]);
  });
});
